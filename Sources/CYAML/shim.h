#ifndef HLSCAP_CYAML_SHIM_H
#define HLSCAP_CYAML_SHIM_H

#include <yaml.h>

#endif
