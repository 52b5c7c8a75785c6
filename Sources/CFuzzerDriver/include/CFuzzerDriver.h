// libFuzzer's entry for programs that keep their own main (LLVM 11 and later):
// declared here so Swift calls it with the C calling convention. Only the
// fuzzing build (`make fuzz`, -sanitize=fuzzer) links libFuzzer and uses it.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
