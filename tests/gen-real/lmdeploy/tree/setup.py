import os
import re
import subprocess

from setuptools import setup

_target_device = os.getenv('LMDEPLOY_TARGET_DEVICE', 'cuda').lower()
_disable_turbomind = os.getenv('DISABLE_TURBOMIND', '').lower()


def get_turbomind_deps():
    # runs nvcc --version; adds nvidia-nccl-cuXX, nvidia-cuda-runtime-cuXX,
    # nvidia-cublas-cuXX, nvidia-curand-cuXX for the CUDA major it finds
    return []


def parse_requirements(fname):
    # reads the file, following -r lines
    return []


if __name__ == '__main__':
    ext_modules, cmdclass, extra_deps = [], {}, []
    if _target_device == 'cuda' and _disable_turbomind not in ('1', 'on', 't', 'true', 'yes'):
        import cmake_build_extension
        ext_modules = [
            cmake_build_extension.CMakeExtension(
                name='_turbomind',
                install_prefix='lmdeploy/lib',
                cmake_depends_on=['pybind11'],
                source_dir=os.path.dirname(os.path.abspath(__file__)),
                cmake_configure_options=['-DCALL_FROM_SETUP_PY:BOOL=ON', '-DBUILD_PY_FFI=ON', '-DBUILD_MULTI_GPU=ON'],
            )
        ]
        cmdclass = {'build_ext': cmake_build_extension.BuildExtension}
        extra_deps = get_turbomind_deps()
    setup(
        install_requires=parse_requirements(f'requirements/runtime_{_target_device}.txt') + extra_deps,
        extras_require={
            'all': parse_requirements(f'requirements_{_target_device}.txt'),
            'lite': parse_requirements('requirements/lite.txt'),
            'serve': parse_requirements('requirements/serve.txt'),
        },
        ext_modules=ext_modules,
        cmdclass=cmdclass,
    )
