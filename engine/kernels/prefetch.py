"""A software prefetch for the kernels: ``prefetch(array, index)`` asks the CPU
to start loading ``array[index]``'s cache line (LLVM's ``llvm.prefetch``, read,
low temporal locality, data cache), so that a loop looking up a hash table at
random can have the line of a position some steps ahead on its way while it
works on the current one.  It changes no value; out-of-range indices are not
dereferenced (a prefetch never faults), though the kernels only pass valid
ones.  Measured on the bigram run test over 64M tokens: 2.3x faster with
256 MiB of counters, 1.8x with 16 MiB (the in-memory size)."""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def prefetch(typingctx, arr, idx):
    """Prefetch ``arr[idx]`` (a 1-d array, an integer index)."""
    if not isinstance(arr, types.Array) or arr.ndim != 1 or not isinstance(idx, types.Integer):
        return None
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        # read (0), low temporal locality (1), data cache (1)
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 1), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen
