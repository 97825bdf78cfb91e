#ifndef HEARTH_COPENSSL_SHIM_H
#define HEARTH_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>

/* Function-like macros Swift cannot import. */
static inline long hearth_BIO_get_mem_data(BIO *b, char **pp) { return BIO_get_mem_data(b, pp); }
static inline int hearth_EVP_PKEY_CTX_set_rsa_keygen_bits(EVP_PKEY_CTX *ctx, int bits) {
    return EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, bits);
}
static inline int hearth_EVP_PKEY_CTX_set_rsa_padding(EVP_PKEY_CTX *ctx, int pad) {
    return EVP_PKEY_CTX_set_rsa_padding(ctx, pad);
}
#endif
