/* builtin.c - the tuning table built into the library; written by
 * tools/tune/make_builtin.sh (pccl-tune), do not edit by hand. */
#include "table.h"

const char pccl_tune_builtin[] = "";
