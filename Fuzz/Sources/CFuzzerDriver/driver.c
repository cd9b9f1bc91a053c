#include "CFuzzerDriver.h"

// libFuzzer's entry for programs with a main of their own. SwiftPM makes the executable's main
// (`--defsym main=<module>_main`), so libFuzzer's main, linked in too, is never called; it still
// needs each target's LLVMFuzzerTestOneInput, which is the function passed here.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*test)(const uint8_t *data, size_t size));

int hlscap_fuzz_run(int argc, char **argv, hlscap_fuzz_test_one_input test) {
    return LLVMFuzzerRunDriver(&argc, &argv, test);
}
