#ifndef HLSCAP_CSSL_SHIM_H
#define HLSCAP_CSSL_SHIM_H

/* OpenSSL's libssl: TLS for the HTTPS server. */
#include <string.h>
#include <time.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/ocsp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

/* h2 first, then http/1.1, in ALPN's wire format. */
static const unsigned char hlscap_alpn_protocols[] = "\x02h2\x08http/1.1";

/* Picks the first of ours the client offers; a client that offers neither gets no ALPN and HTTP/1.1. */
static inline int hlscap_select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                              const unsigned char *in, unsigned int inlen, void *arg) {
    (void)ssl;
    (void)arg;
    unsigned char *selected = NULL;
    unsigned char length = 0;
    if (SSL_select_next_proto(&selected, &length, hlscap_alpn_protocols, sizeof hlscap_alpn_protocols - 1,
                              in, inlen) != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_NOACK;
    }
    *out = selected;
    *outlen = length;
    return SSL_TLSEXT_ERR_OK;
}

/* The settings Swift cannot reach (they are macros): TLS 1.2 at least, partial writes from a buffer
   that may move, no renegotiation or compression, ALPN. 1 on success. */
static inline int hlscap_ssl_ctx_prepare(SSL_CTX *ctx) {
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) return 0;
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER
                              | SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_alpn_select_cb(ctx, hlscap_select_alpn, NULL);
    return 1;
}

/* Adds an intermediate certificate to the chain sent; the context takes `x509` on success. */
static inline int hlscap_ssl_ctx_add_chain_certificate(SSL_CTX *ctx, X509 *x509) {
    return (int)SSL_CTX_add0_chain_cert(ctx, x509);
}

/* The intermediates a context sends; the context keeps them. */
static inline int hlscap_ssl_ctx_get0_chain_certificates(SSL_CTX *ctx, STACK_OF(X509) **chain) {
    return (int)SSL_CTX_get0_chain_certs(ctx, chain);
}

/* An OCSP response to staple: its DER bytes and its nextUpdate (0: none). The context's owner keeps it
   alive as long as a connection made from the context may still shake hands. */
typedef struct {
    const unsigned char *der;
    long length;
    time_t expires;
} hlscap_ocsp_staple;

/* Called only when the client asks for status: staples a copy of the response (OpenSSL frees what it is
   given, once per handshake), or nothing once the response has expired. */
static inline int hlscap_staple_ocsp(SSL *ssl, void *arg) {
    const hlscap_ocsp_staple *staple = arg;
    if (staple->expires != 0 && staple->expires <= time(NULL)) return SSL_TLSEXT_ERR_NOACK;
    unsigned char *copy = OPENSSL_malloc((size_t)staple->length);
    if (copy == NULL) return SSL_TLSEXT_ERR_NOACK;
    memcpy(copy, staple->der, (size_t)staple->length);
    if (SSL_set_tlsext_status_ocsp_resp(ssl, copy, staple->length) != 1) {
        OPENSSL_free(copy);
        return SSL_TLSEXT_ERR_NOACK;
    }
    return SSL_TLSEXT_ERR_OK;
}

static inline int hlscap_ssl_ctx_staple_ocsp(SSL_CTX *ctx, const hlscap_ocsp_staple *staple) {
    if (SSL_CTX_set_tlsext_status_cb(ctx, hlscap_staple_ocsp) != 1) return 0;
    return (int)SSL_CTX_set_tlsext_status_arg(ctx, (void *)staple);
}

#endif
