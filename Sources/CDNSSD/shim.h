// Shim for the Debian package libavahi-compat-libdnssd-dev (pkg-config: avahi-compat-libdns_sd). Swift code sees this
// module only through `internal import`, so C types never reach public API.
#include <dns_sd.h>
