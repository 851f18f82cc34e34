// Framing the reference: an honest row sum that also writes one byte where the reference's guard zone lies under
// a protocol that allocates the reference's copy of y right after the candidate's. If the write were found only
// after the reference's run, the reference would be blamed and the measurement end as the problem's fault.
// FRAME=0 is the honest twin.
// @kerncast launch row_sum_frame grid(ceil_div(M, 128)) block(128) args(x, y, M, N)
// @kerncast tunable FRAME 0 1

extern "C" __global__ void row_sum_frame(const float* x, float* y, int M, int N) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M)
        return;
    const float* r = x + (size_t)row * N;
    float s = 0.0f;
    for (int j = 0; j < N; ++j)
        s += r[j];
    y[row] = s;
    if (FRAME && row == 0) {
        const size_t offset = ((size_t)M * 4 + 4096 + 511) / 512 * 512;  // the reference's y
        ((unsigned char*)y)[offset + (size_t)M * 4 + 7] = 0;             // a byte of its guard zone
    }
}
