"""A pytest plugin for the notebook runs (the Makefile's NBVAL options load it with ``-p nbval_kernels``).

jupyter_client chooses a new kernel's five TCP ports by asking the system for free ones, closes them, and lets the
kernel bind them a moment later. With two test processes starting kernels at once, the other process's kernel can
take a port in that moment; the new kernel then dies before it replies, and nbval reports "Kernel died before
replying to kernel_info" for a notebook that is fine. A second start chooses new ports. Any other failure, or a
third death in a row, is reported as it is.
"""

import nbval.kernel

ATTEMPTS = 3
_start_new_kernel = nbval.kernel.start_new_kernel


def start_new_kernel(*args, **kwargs):
    """nbval's start_new_kernel, started again (up to ATTEMPTS in all) when the kernel died while starting."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return _start_new_kernel(*args, **kwargs)
        except RuntimeError as error:
            if "died" not in str(error) or attempt == ATTEMPTS:
                raise


nbval.kernel.start_new_kernel = start_new_kernel  # RunningKernel looks the name up when it starts a kernel
