#ifndef HLSCAP_CHTTPPARSER_SHIM_H
#define HLSCAP_CHTTPPARSER_SHIM_H

/* Node's http-parser: HTTP/1.1 requests parsed from bytes, for HTTP/1.1 over TLS. */
#include <http_parser.h>

/* The parser's error and the request's method are bitfields. */
static inline unsigned int hlscap_http_parser_errno(const http_parser *parser) {
    return parser->http_errno;
}

static inline const char *hlscap_http_parser_method(const http_parser *parser) {
    return http_method_str((enum http_method)parser->method);
}

#endif
