"""Writes a damaged copy of a ddpbench checkpoint, as a hostile or unlucky user would hand it to
`ddpbench run --resume` (tests/e2e/checkpoint_e2e_test.cpp): ddpbench must refuse each with one
line (exit 2), never crash or read past a record.

usage: damage_checkpoint.py SRC DST HOW
  HOW  empty     the 400-byte tensor record (linear_mse's weight) emptied
       cut4      the same record with its last 4 bytes cut
       inflate   the same record replaced by 64 MiB of zeros, deflated (a small file, a huge record)
       nan       model["weight"][0, 0] = nan
       adam      Adam's state (step, exp_avg, exp_avg_sq) for parameter 0 of an SGD checkpoint
       tpu       ddpbench["mode"] = "tpu", a mode ddpbench does not have
       overwrite 200 bytes inside the same record overwritten in place with finite floats (0x3f3f3f3f),
                 its size and the archive's CRC-32 kept: a damaged disk or copy
       buckets   a ddp checkpoint's "ddp_buckets" text with every digit made 0 (its length and a
                 fresh CRC-32 kept): parameter 0 named in every slot
"""
import sys
import zipfile


def rewrite_record(src, dst, how):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename.split("/")[-2:-1] == ["data"] and len(data) == 400:
                if how == "inflate":
                    zout.writestr(info, bytes(64 << 20), compress_type=zipfile.ZIP_DEFLATED)
                    continue
                data = b"" if how == "empty" else data[:-4]
            zout.writestr(info, data)


def zero_bucket_digits(src, dst):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            at = data.find(b"ddp_buckets") if info.filename.endswith("data.pkl") else -1
            if at >= 0:
                text = data.find(b"X", at + len("ddp_buckets")) + 5  # BINUNICODE, 4-byte length
                size = int.from_bytes(data[text - 4:text], "little")
                zeroed = bytes(b"0"[0] if chr(c).isdigit() else c for c in data[text:text + size])
                data = data[:text] + zeroed + data[text + size:]
            zout.writestr(info, data)


def overwrite_in_place(src, dst):
    with open(src, "rb") as f:
        data = bytearray(f.read())
    with zipfile.ZipFile(src) as z:
        info = next(i for i in z.infolist()
                    if i.filename.split("/")[-2:-1] == ["data"] and i.file_size == 400)
    # The local header (30 bytes, then the name and the extra field) precedes the stored bytes.
    at = info.header_offset
    start = at + 30 + int.from_bytes(data[at + 26:at + 28], "little") + int.from_bytes(
        data[at + 28:at + 30], "little")
    data[start + 100:start + 300] = b"\x3f" * 200
    with open(dst, "wb") as f:
        f.write(data)


def main():
    src, dst, how = sys.argv[1:4]
    if how in ("empty", "cut4", "inflate"):
        rewrite_record(src, dst, how)
        return
    if how == "overwrite":
        overwrite_in_place(src, dst)
        return
    if how == "buckets":
        zero_bucket_digits(src, dst)
        return
    import torch

    ckpt = torch.load(src)
    if how == "nan":
        ckpt["model"]["weight"][0, 0] = float("nan")
    elif how == "adam":
        # Both parameters: a one-item dict would be pickled with SETITEM, which libtorch 1.13's
        # unpickler lacks.
        ckpt["optimizer"]["state"] = {
            i: {
                "step": torch.tensor(1.0),
                "exp_avg": torch.zeros_like(ckpt["model"][name]),
                "exp_avg_sq": torch.zeros_like(ckpt["model"][name]),
            }
            for i, name in enumerate(("weight", "bias"))
        }
    elif how == "tpu":
        ckpt["ddpbench"]["mode"] = "tpu"
    else:
        sys.exit(f"unknown HOW {how!r}")
    # ddpbench reads no param group, and libtorch 1.13's unpickler lacks the APPEND opcode Python
    # writes for a one-element list (as in checkpoint_oracle.py --doctor).
    ckpt["optimizer"]["param_groups"] = []
    torch.save(ckpt, dst)


if __name__ == "__main__":
    main()
