// Linux and glibc interfaces that Swift's Glibc module leaves out (malloc
// tuning). Header-only: nothing to link beyond libc.
#include <malloc.h>
