#ifndef HLSCAP_CNGHTTP2_SHIM_H
#define HLSCAP_CNGHTTP2_SHIM_H

/* nghttp2: HTTP/2 framing, HPACK, flow control and stream states, as a server session fed bytes. */
#include <nghttp2/nghttp2.h>

#endif
