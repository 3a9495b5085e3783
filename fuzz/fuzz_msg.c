/*
 * fuzz_msg.c - libFuzzer target: a received message's bytes (the
 * serialised form every frame of a message carries between nodes,
 * msg.h) are deserialised, then unpacked as every type and as strings
 * until they run out.  Any input may be refused; none may crash, read out
 * of bounds or leak (ASan + UBSan).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "msg/msg.h"
#include "pvm3.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Unpack b to its end as the types the input's first byte picks. */
static void unpack_all(msg_buf_t *b, uint8_t pick)
{
    static const int types[] = {PVM_BYTE, PVM_SHORT, PVM_INT, PVM_FLOAT, PVM_CPLX,
                                PVM_DOUBLE, PVM_DCPLX, PVM_LONG, PVM_USHORT, PVM_UINT,
                                PVM_ULONG};
    const int ntypes = (int)(sizeof types / sizeof types[0]);
    char room[512];
    for (int round = 0; round < 64 && msg_buf_remaining(b) > 0; round++) {
        int r;
        if ((pick + round) % (ntypes + 1) == ntypes) {
            r = msg_unpack_str(b, room, sizeof room);
        } else {
            int type = types[(pick + round) % ntypes];
            int count = 1 + (pick >> 3) % 8, stride = 1 + (round % 2);
            r = msg_unpack(b, type, room, count, stride);
        }
        if (r == -ENODATA || r == -EBADMSG)
            break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    msg_buf_t *b = NULL;
    if (msg_buf_deserialize(data, size, &b) != 0)
        return 0;
    unpack_all(b, size ? data[size - 1] : 0);
    msg_buf_rewind(b);
    unpack_all(b, size > 1 ? data[size - 2] : 1);
    msg_buf_unref(b);
    return 0;
}
