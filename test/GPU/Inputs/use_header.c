/* Compiles against the header ffnc writes for an NVIDIA target. */
#include "sw.h"

const ffn_kernel_desc *kernel(void) { return &ffn_kernel_sw; }
int params(void) { return ffn_sw_num_params; }
