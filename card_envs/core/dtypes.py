"""numpy dtypes as dtype objects, for per-step code.

``np.zeros(n, FLOAT32)`` or ``np.frombuffer(b, FLOAT32)`` skips numpy's conversion of the
scalar type ``np.float32`` into a dtype on every call: with numpy 2.4 that conversion costs
about 200 ns in ``np.frombuffer`` and some 25-45 ns in ``np.zeros`` (pass the dtype
positionally: ``frombuffer``'s keyword path is slower still).
"""

import numpy as np

FLOAT32 = np.dtype(np.float32)
INT8 = np.dtype(np.int8)
UINT8 = np.dtype(np.uint8)
