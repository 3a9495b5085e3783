/*
 * packf.c - pvm_packf / pvm_unpackf format strings.
 *
 * The format (pvm_pack(3PVM), and pvm_vpackf/pvm_vunpackf in PVM 3.4.6's
 * lpvmpack.c, which this follows):
 *
 *   format   : [ "%+" ] { other-char | conversion }
 *   conversion: '%' [count] ['.' stride] {'h' | 'l' | 'u'} fchar
 *   count    : digits | '*'       (default 1; '*' takes an int argument)
 *   stride   : digits | '*'       (default 1)
 *   fchar    : 'c' bytes, 'd' integers, 'f' floats, 'x' complex, 's' string
 *
 *   "%+" (only at the very start) takes an int encoding and starts a new
 *   message, as pvm_initsend.  'h' makes 'd' short; 'l' makes 'd' long,
 *   'f' double and 'x' double complex; 'u' makes 'd' unsigned.  Characters
 *   outside conversions are ignored.  Any other fchar: -EINVAL.
 *
 * Packing: a conversion with neither count nor stride takes its argument
 * by value (%c, %hd: an int; %d: int; %ld: long; %f, %lf: a double), else
 * a pointer to count items.  %x and %s always take a pointer; %s packs one
 * string and ignores count and stride.  Unpacking always takes pointers.
 *
 * Details kept from PVM: a negative count (from '*') packs and unpacks
 * nothing and succeeds (the encoders' loops simply do not run); strides
 * are not checked; what was packed before a failing conversion stays.
 * Differences, deliberate: '%lud' packs an unsigned long as XDR ulong
 * (PVM uses its long encoder, so 0x80000000..0xffffffff overflow there);
 * '%s' into an in-place message is -ENOSYS as the manual says (PVM's
 * test compares the encoding with 2 instead of its internal 0x20000000 and
 * lets it through).
 */
#include "msg/msg_impl.h"

#include <errno.h>
#include <limits.h>

/* One parsed conversion. */
struct conv {
    int count, stride;
    bool byvalue;        /* no count and no stride given */
    bool h, l, u;        /* modifiers */
    char fchar;
};

/* Parse digits at *pp (at least one there); saturates at INT_MAX. */
static int parse_int(const char **pp)
{
    const char *p = *pp;
    int v = 0;

    for (; *p >= '0' && *p <= '9'; p++)
        v = v > (INT_MAX - 9) / 10 ? INT_MAX : v * 10 + (*p - '0');
    *pp = p;
    return v;
}

/* Parse the conversion after a '%' at *pp, taking '*' arguments from *ap.
 * (A va_list is passed by pointer, so the caller can keep using it: the
 * callers work on a va_copy, as a va_list parameter may be an array.) */
static void parse_conv(const char **pp, struct conv *c, va_list *ap)
{
    const char *p = *pp;

    c->count = c->stride = 1;
    c->byvalue = true;
    c->h = c->l = c->u = false;
    if (*p == '*') {
        c->count = va_arg(*ap, int);
        c->byvalue = false;
        p++;
    } else if (*p >= '0' && *p <= '9') {
        c->count = parse_int(&p);
        c->byvalue = false;
    }
    if (*p == '.') {
        c->byvalue = false;
        p++;
        if (*p == '*') {
            c->stride = va_arg(*ap, int);
            p++;
        } else if (*p >= '0' && *p <= '9') {
            c->stride = parse_int(&p);
        }
    }
    for (;; p++) {
        if (*p == 'h')
            c->h = true;
        else if (*p == 'l')
            c->l = true;
        else if (*p == 'u')
            c->u = true;
        else
            break;
    }
    c->fchar = *p;
    if (*p) /* PVM steps over the end of the format here; we stop */
        p++;
    if (c->count < 0) /* PVM: the encoders' loops run zero times */
        c->count = 0;
    *pp = p;
}

static int vpackf(msg_buf_t **bufp, const char *fmt, va_list *app)
{
    const char *p = fmt;
    struct conv c;
    int cc;

    if (p[0] == '%' && p[1] == '+') {
        msg_buf_t *nb;
        if ((cc = msg_buf_new(va_arg(*app, int), &nb)))
            return cc;
        *bufp = nb;
        p += 2;
    }
    if (!*bufp)
        return -EBADF;

    while (*p) {
        if (*p++ != '%')
            continue;
        parse_conv(&p, &c, app);
        switch (c.fchar) {
        case 'c':
            if (c.byvalue) {
                char v = (char)va_arg(*app, int);
                cc = msg_pack(*bufp, PVM_BYTE, &v, 1, 1);
            } else {
                cc = msg_pack(*bufp, PVM_BYTE, va_arg(*app, char *), c.count,
                              c.stride);
            }
            break;
        case 'd':
            if (c.l) {
                int t = c.u ? PVM_ULONG : PVM_LONG;
                if (c.byvalue) {
                    long v = va_arg(*app, long);
                    cc = msg_pack(*bufp, t, &v, 1, 1);
                } else {
                    cc = msg_pack(*bufp, t, va_arg(*app, long *), c.count,
                                  c.stride);
                }
            } else if (c.h) {
                int t = c.u ? PVM_USHORT : PVM_SHORT;
                if (c.byvalue) {
                    short v = (short)va_arg(*app, int);
                    cc = msg_pack(*bufp, t, &v, 1, 1);
                } else {
                    cc = msg_pack(*bufp, t, va_arg(*app, short *), c.count,
                                  c.stride);
                }
            } else {
                int t = c.u ? PVM_UINT : PVM_INT;
                if (c.byvalue) {
                    int v = va_arg(*app, int);
                    cc = msg_pack(*bufp, t, &v, 1, 1);
                } else {
                    cc = msg_pack(*bufp, t, va_arg(*app, int *), c.count,
                                  c.stride);
                }
            }
            break;
        case 'f':
            if (c.l) {
                if (c.byvalue) {
                    double v = va_arg(*app, double);
                    cc = msg_pack(*bufp, PVM_DOUBLE, &v, 1, 1);
                } else {
                    cc = msg_pack(*bufp, PVM_DOUBLE, va_arg(*app, double *),
                                  c.count, c.stride);
                }
            } else {
                if (c.byvalue) { /* a float argument arrives as a double */
                    float v = (float)va_arg(*app, double);
                    cc = msg_pack(*bufp, PVM_FLOAT, &v, 1, 1);
                } else {
                    cc = msg_pack(*bufp, PVM_FLOAT, va_arg(*app, float *),
                                  c.count, c.stride);
                }
            }
            break;
        case 'x':
            if (c.l)
                cc = msg_pack(*bufp, PVM_DCPLX, va_arg(*app, double *), c.count,
                              c.stride);
            else
                cc = msg_pack(*bufp, PVM_CPLX, va_arg(*app, float *), c.count,
                              c.stride);
            break;
        case 's':
            cc = msg_pack_str(*bufp, va_arg(*app, char *));
            break;
        default:
            cc = -EINVAL;
            break;
        }
        if (cc)
            return cc;
    }
    return 0;
}

int msg_vpackf(msg_buf_t **bufp, const char *fmt, va_list ap)
{
    va_list aq;
    int cc;

    va_copy(aq, ap);
    cc = vpackf(bufp, fmt, &aq);
    va_end(aq);
    return cc;
}

int msg_packf(msg_buf_t **bufp, const char *fmt, ...)
{
    va_list ap;
    int cc;

    va_start(ap, fmt);
    cc = msg_vpackf(bufp, fmt, ap);
    va_end(ap);
    return cc;
}

static int vunpackf(msg_buf_t *b, const char *fmt, va_list *app)
{
    const char *p = fmt;
    struct conv c;
    int cc, t;

    if (!b)
        return -EBADF;

    while (*p) {
        if (*p++ != '%')
            continue;
        parse_conv(&p, &c, app);
        switch (c.fchar) {
        case 'c':
            cc = msg_unpack(b, PVM_BYTE, va_arg(*app, char *), c.count,
                            c.stride);
            break;
        case 'd':
            if (c.l)
                t = c.u ? PVM_ULONG : PVM_LONG;
            else if (c.h)
                t = c.u ? PVM_USHORT : PVM_SHORT;
            else
                t = c.u ? PVM_UINT : PVM_INT;
            cc = msg_unpack(b, t, va_arg(*app, void *), c.count, c.stride);
            break;
        case 'f':
            t = c.l ? PVM_DOUBLE : PVM_FLOAT;
            cc = msg_unpack(b, t, va_arg(*app, void *), c.count, c.stride);
            break;
        case 'x':
            t = c.l ? PVM_DCPLX : PVM_CPLX;
            cc = msg_unpack(b, t, va_arg(*app, void *), c.count, c.stride);
            break;
        case 's':
            cc = msg_unpack_str(b, va_arg(*app, char *), SIZE_MAX);
            break;
        default:
            cc = -EINVAL;
            break;
        }
        if (cc)
            return cc;
    }
    return 0;
}

int msg_vunpackf(msg_buf_t *b, const char *fmt, va_list ap)
{
    va_list aq;
    int cc;

    va_copy(aq, ap);
    cc = vunpackf(b, fmt, &aq);
    va_end(aq);
    return cc;
}

int msg_unpackf(msg_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    int cc;

    va_start(ap, fmt);
    cc = msg_vunpackf(b, fmt, ap);
    va_end(ap);
    return cc;
}
