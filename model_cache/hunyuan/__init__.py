"""HunyuanOCR on ncnn.

Set before anything imports ncnn: its bundled libgomp reads OMP_WAIT_POLICY once, when loaded.
With the default policy, an OpenMP thread that reaches a barrier spins; on a machine whose cores
are busy with other processes the spinning thread holds a core the thread it waits for needs,
and every one of the hundreds of parallel regions of a decode step can stall for a scheduler slice.
Measured on the shared 2-vCPU dev box (2 threads, fp32, 4 decoder layers, ~1440 tokens of
context): 217-424 ms per layer with the default policy, 15 ms with PASSIVE. A value set by
the user wins.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
