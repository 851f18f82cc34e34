// Sizes of the blur kernel, fixed at compile time as in many tuned kernels.
#define N 10000
#define TAPS 8
