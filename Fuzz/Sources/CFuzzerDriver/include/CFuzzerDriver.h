#ifndef CFUZZERDRIVER_H
#define CFUZZERDRIVER_H

#include <stddef.h>
#include <stdint.h>

typedef int (*hlscap_fuzz_test_one_input)(const uint8_t *data, size_t size);

/// Runs libFuzzer on `test` with the command line's options and inputs; returns its exit status.
int hlscap_fuzz_run(int argc, char **argv, hlscap_fuzz_test_one_input test);

#endif
