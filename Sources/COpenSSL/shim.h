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

/* HMAC with a caller-fetched digest, on OpenSSL 3's HMAC_CTX (declared deprecated there, still
   supported): the one-shot HMAC() looks up the MAC and the digest by name on every call
   (EVP_Q_mac), which costs several times the hashing of a short message. Returns 1 on success. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static inline int hearth_hmac(const EVP_MD *md, const void *key, int key_len,
                              const unsigned char *data, size_t data_len,
                              unsigned char *out, unsigned int *out_len)
{
    HMAC_CTX *ctx = HMAC_CTX_new();
    if (ctx == NULL) return 0;
    int ok = HMAC_Init_ex(ctx, key, key_len, md, NULL)
          && HMAC_Update(ctx, data, data_len)
          && HMAC_Final(ctx, out, out_len);
    HMAC_CTX_free(ctx);
    return ok;
}
#pragma GCC diagnostic pop
#endif
