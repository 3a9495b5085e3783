/*
 * hostname.c - the names this host answers to (hostname.h).
 */
#define _GNU_SOURCE
#include "node/hostname.h"

#include "util/env.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Append name (if it fits and is not there yet). */
static size_t add(char *buf, size_t used, size_t len, const char *name)
{
    size_t n = strlen(name) + 1;
    if (n == 1 || used + n > len)
        return used;
    for (size_t off = 0; off < used; off += strlen(buf + off) + 1)
        if (strcmp(buf + off, name) == 0)
            return used;
    memcpy(buf + used, name, n);
    return used + n;
}

size_t node_host_names(char *buf, size_t len)
{
    char full[256] = "", shortname[256];
    if (gethostname(full, sizeof full - 1) != 0 || !full[0])
        strcpy(full, "localhost");
    snprintf(shortname, sizeof shortname, "%.*s", (int)strcspn(full, "."), full);
    size_t used = add(buf, 0, len, shortname);
    used = add(buf, used, len, full);
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) != 0)
        return used;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        char addr[INET6_ADDRSTRLEN];
        if (!i->ifa_addr || (i->ifa_flags & IFF_LOOPBACK))
            continue;
        int family = i->ifa_addr->sa_family;
        const void *a = family == AF_INET ? (void *)&((struct sockaddr_in *)i->ifa_addr)->sin_addr
                      : family == AF_INET6 ? (void *)&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr
                                           : NULL;
        if (a && inet_ntop(family, a, addr, sizeof addr))
            used = add(buf, used, len, addr);
    }
    freeifaddrs(ifs);
    return used;
}

bool node_host_standby(const char *names, size_t len)
{
    const char *list;
    if (env_string("UPVM_STANDBY_HOSTS", &list) <= 0)
        return false;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        for (size_t off = 0; off < len; off += strlen(names + off) + 1)
            if (strlen(names + off) == n && strncmp(names + off, p, n) == 0)
                return true;
        p += n + (p[n] == ',');
    }
    return false;
}

const char *node_host_epath(void)
{
    static bool looked;
    static char ep[4096];
    if (looked)
        return ep[0] ? ep : NULL;
    looked = true;
    const char *list;
    if (env_string("UPVM_HOST_EPATHS", &list) <= 0)
        return NULL;
    char names[NODE_ALIASES_MAX];
    size_t len = node_host_names(names, sizeof names);
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ";");
        const char *eq = memchr(p, '=', n);
        size_t nl = eq ? (size_t)(eq - p) : 0;
        bool match = eq && nl == 9 && strncmp(p, "localhost", 9) == 0;
        for (size_t off = 0; eq && !match && off < len; off += strlen(names + off) + 1)
            match = strlen(names + off) == nl && strncmp(names + off, p, nl) == 0;
        if (match && n - nl - 1 < sizeof ep) {
            snprintf(ep, sizeof ep, "%.*s", (int)(n - nl - 1), eq + 1);
            break;
        }
        p += n + (p[n] == ';');
    }
    return ep[0] ? ep : NULL;
}
