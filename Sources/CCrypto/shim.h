// Shim for OpenSSL's libcrypto from the Debian package libssl-dev (pkg-config: libcrypto).
// Swift code sees this module only through `internal import`, so C types never reach
// public API. Only the EVP interfaces are used: AEAD ciphers and the BLAKE2b MAC.
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/err.h>
