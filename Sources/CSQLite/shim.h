// Shim for the Debian package libsqlite3-dev (pkg-config: sqlite3). Swift code sees this
// module only through `internal import`, so C types never reach public API.
#include <sqlite3.h>
