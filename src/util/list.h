/*
 * list.h - intrusive circular doubly-linked lists.
 *
 * A list is a sentinel link whose next/prev point at itself when empty.
 * The link type is the one the public wait queue embeds (upvm.h), so a
 * upvm_waitq_t's head is an ordinary list head here.
 */
#ifndef UPVM_UTIL_LIST_H
#define UPVM_UTIL_LIST_H

#include <stddef.h>
#include <stdbool.h>
#include <upvm.h>

typedef struct upvm_waitq_link list_link_t;

#define list_entry(link, type, member) \
    ((type *)((char *)(link) - offsetof(type, member)))

static inline void list_init(list_link_t *head)
{
    head->next = head->prev = head;
}

static inline bool list_empty(const list_link_t *head)
{
    return head->next == head;
}

/* A link that is on no list points at itself (list_unlink leaves it so). */
static inline bool list_linked(const list_link_t *link)
{
    return link->next != link;
}

static inline void list_insert_between(list_link_t *l, list_link_t *prev,
                                       list_link_t *next)
{
    l->prev = prev;
    l->next = next;
    prev->next = l;
    next->prev = l;
}

static inline void list_push_back(list_link_t *head, list_link_t *l)
{
    list_insert_between(l, head->prev, head);
}

static inline void list_push_front(list_link_t *head, list_link_t *l)
{
    list_insert_between(l, head, head->next);
}

static inline void list_unlink(list_link_t *l)
{
    l->prev->next = l->next;
    l->next->prev = l->prev;
    l->next = l->prev = l;
}

/* Remove and return the first link, or NULL when empty. */
static inline list_link_t *list_pop_front(list_link_t *head)
{
    list_link_t *l = head->next;
    if (l == head)
        return NULL;
    list_unlink(l);
    return l;
}

#define list_for_each(pos, head) \
    for (list_link_t *pos = (head)->next; pos != (head); pos = pos->next)

#endif /* UPVM_UTIL_LIST_H */
