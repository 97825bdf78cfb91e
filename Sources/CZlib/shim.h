#ifndef HEARTH_CZLIB_SHIM_H
#define HEARTH_CZLIB_SHIM_H
#include <zlib.h>

/* inflateInit2 is a function-like macro Swift cannot import. windowBits 15 + 32 reads the zlib and
   gzip formats (gRPC's "deflate" and "gzip"), told apart by their headers. */
static inline int hearth_inflate_init(z_stream *stream) {
    return inflateInit2(stream, 15 + 32);
}
#endif
