#!/usr/bin/python3
"""Debian 12's torchrun (python3-torch 1.13) made to run on Python 3.11; same arguments as torchrun.

As shipped, every launch dies in elastic's to_map() with "'NoneType' object has no attribute 'get'": Std.from_str
looks a value up by iterating the Std flag enum, and since Python 3.11 iterating a Flag yields only its canonical
one-bit members, so "0" (NONE) and "3" (ALL) find nothing. Here the lookup is made by value (Std(int)), which
covers every member; the rest of from_str (its input check, the "local_rank:value,..." mapping) is torch's own.
"""
import re
import sys

from torch.distributed.elastic.multiprocessing import api
from torch.distributed.run import main

_torch_from_str = api.Std.from_str


def _from_str_by_value(vm):
    result = _torch_from_str(vm)  # validates the text; its member lookups may come back None on 3.11
    if isinstance(result, dict):
        return {rank: api.Std(int(v)) for rank, v in (m.split(":") for m in vm.split(","))}
    return api.Std(int(vm)) if re.fullmatch(r"\d", vm.strip()) else result


api.Std.from_str = _from_str_by_value

if __name__ == "__main__":
    sys.exit(main())
