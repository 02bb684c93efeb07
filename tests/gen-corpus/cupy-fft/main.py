import cupy as cp

print(cp.fft.fft(cp.arange(8)))
