from setuptools import setup
from torch.utils import cpp_extension
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

nvcc_flags = ["-O3", "--use_fast_math", "--expt-relaxed-constexpr", "--expt-extended-lambda"]
cuda_ext_args = {"cxx": ["-O3"], "nvcc": nvcc_flags}

setup(
    name="fused_kernels",
    version="0.0.1",
    ext_modules=[
        CUDAExtension(
            "scaled_upper_triang_masked_softmax_cuda",
            ["scaled_upper_triang_masked_softmax.cpp", "scaled_upper_triang_masked_softmax_cuda.cu"],
            extra_compile_args=cuda_ext_args,
        ),
        CUDAExtension(
            "scaled_masked_softmax_cuda",
            ["scaled_masked_softmax.cpp", "scaled_masked_softmax_cuda.cu"],
            extra_compile_args=cuda_ext_args,
        ),
    ],
    cmdclass={"build_ext": BuildExtension},
)
