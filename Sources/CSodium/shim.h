// Shim for the Debian package libsodium-dev (pkg-config: libsodium). Swift code sees this
// module only through `internal import`, so C types never reach public API.
#include <sodium.h>
