#ifndef CPROJ_SHIM_H
#define CPROJ_SHIM_H
#include <proj.h>
#endif
