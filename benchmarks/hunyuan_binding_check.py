"""What the installed ncnn Python binding offers for keeping HunyuanOCR's KV caches on the GPU.

Prints, from the module itself (no model needed): the binding's version and classes, the
signatures of Extractor.input / extract / set_kvcache_allocator, whether VkMat, VkCompute and
the Vk* allocator setters exist, and, where ncnn finds a Vulkan device, what happens when a
VkBlobAllocator is handed to the kv-cache setters. Then the files of the installed package: a
compiled extension holding VkMat caches would need ncnn's headers and a linkable libncnn.

    python benchmarks/hunyuan_binding_check.py
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import ncnn


def signature(obj, name: str) -> str:
    member = getattr(obj, name, None)
    if member is None:
        return f"{name}: MISSING"
    doc = (member.__doc__ or "").strip().splitlines()
    lines = [line.strip() for line in doc if "(self" in line]
    return f"{name}: " + (" | ".join(lines) if lines else doc[0] if doc else "?")


def main() -> int:
    print(f"ncnn {importlib.metadata.version('ncnn')} from {ncnn.__file__}")
    names = sorted(n for n in dir(ncnn) if not n.startswith("_"))
    print("classes:", ", ".join(n for n in names if isinstance(getattr(ncnn, n), type)))
    for wanted in ("VkMat", "VkImageMat", "VkCompute", "VkTransfer", "Command"):
        print(f"ncnn.{wanted}: {'present' if hasattr(ncnn, wanted) else 'MISSING'}")
    for name in ("input", "extract", "set_kvcache_allocator", "set_kvcache_max_seqlen_hint",
                 "set_blob_vkallocator", "set_workspace_vkallocator", "set_staging_vkallocator",
                 "set_kvcache_vkallocator"):
        print("Extractor." + signature(ncnn.Extractor, name))
    print("Option fields with 'vk' or 'kv':",
          ", ".join(n for n in dir(ncnn.Option) if "vk" in n.lower() or "kv" in n.lower()))
    if ncnn.get_gpu_count() > 0:
        vulkan_tries()
    else:
        print("no Vulkan device: allocator tries skipped")
    files = [Path(str(f)) for f in importlib.metadata.files("ncnn") or []]
    print(f"installed files: {len(files)}; headers (.h): {sum(f.suffix == '.h' for f in files)}; "
          f"libraries: {[str(f) for f in files if f.suffix in ('.so', '.a') or '.so.' in f.name]}")
    return 0


def vulkan_tries() -> None:
    device = ncnn.get_gpu_device(0)
    print("Vulkan device:", ncnn.get_gpu_info(0).device_name())
    allocator = ncnn.VkBlobAllocator(device)
    net = ncnn.Net()
    net.opt.use_vulkan_compute = True
    try:
        net.opt.kvcache_vkallocator = allocator
        print("Option.kvcache_vkallocator = VkBlobAllocator: accepted (but what it allocates is a VkMat, and extract() hands blobs back as host Mats only)")
    except (TypeError, AttributeError) as exc:
        print(f"Option.kvcache_vkallocator = VkBlobAllocator: refused ({type(exc).__name__}: {exc})")
    ex = net.create_extractor()
    try:
        ex.set_kvcache_allocator(allocator)
        print("Extractor.set_kvcache_allocator(VkBlobAllocator): accepted")
    except TypeError as exc:
        print(f"Extractor.set_kvcache_allocator(VkBlobAllocator): refused (TypeError: {str(exc).splitlines()[0]})")
    try:
        ex.input("in0", allocator)
        print("Extractor.input(name, VkBlobAllocator): accepted?!")
    except TypeError:
        print("Extractor.input takes ncnn.Mat only (a GPU object is refused: TypeError)")
    del ex, net  # before the allocator


if __name__ == "__main__":
    raise SystemExit(main())
