#ifndef HEARTH_CNGHTTP2_SHIM_H
#define HEARTH_CNGHTTP2_SHIM_H
#include <stdint.h>
#include <stddef.h>
#include <nghttp2/nghttp2.h>
#endif
