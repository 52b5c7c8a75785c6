// Shim for the Debian package libzstd-dev (pkg-config: libzstd). Swift code sees this
// module only through `internal import`, so C types never reach public API.
#include <zstd.h>
