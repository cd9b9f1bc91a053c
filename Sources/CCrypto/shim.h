#ifndef HLSCAP_CCRYPTO_SHIM_H
#define HLSCAP_CCRYPTO_SHIM_H

/* OpenSSL's libcrypto: digests and MACs (EVP), and the system's random source (RAND_bytes). */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#endif
