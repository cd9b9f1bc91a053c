#ifndef HLSCAP_CZLIB_SHIM_H
#define HLSCAP_CZLIB_SHIM_H

#include <zlib.h>

/* deflateInit2 is a macro; window bits 15 + 16 ask for the gzip wrapper (RFC 1952). */
static inline int hlscap_gzip_init(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

#endif
