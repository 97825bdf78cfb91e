#ifndef HEARTH_CNGHTTP2_SHIM_H
#define HEARTH_CNGHTTP2_SHIM_H
#include <stdint.h>
#include <stddef.h>
#include <nghttp2/nghttp2.h>

/* nghttp2_frame is a union; these read the fields the server needs without Swift touching it. */
static inline uint8_t hearth_frame_type(const nghttp2_frame *f) { return f->hd.type; }
static inline uint8_t hearth_frame_flags(const nghttp2_frame *f) { return f->hd.flags; }
static inline int32_t hearth_frame_stream_id(const nghttp2_frame *f) { return f->hd.stream_id; }
static inline int hearth_frame_is_request_headers(const nghttp2_frame *f)
{
    return f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST;
}
/* A DATA frame's padding (pad-length byte included; 0 without padding). */
static inline size_t hearth_frame_data_padlen(const nghttp2_frame *f) { return f->data.padlen; }
#endif
