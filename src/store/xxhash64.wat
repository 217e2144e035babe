;; The XXH64 stripe loop (SPEC §11.2: zstd content checksums) as WebAssembly, for
;; src/store/xxhash64.ts. Compiled by scripts/make-xxh64-wasm.mjs into src/store/xxhash64-wasm.ts;
;; test/xxhash64-wasm.node.test.ts checks that file is this one compiled.
;;
;; Memory layout: the four lanes v1..v4 as little-endian u64 at bytes 0..31; the input stripes from
;; byte 64 on. `stripes(len)` runs the lanes over the `len` bytes at 64 (`len` a multiple of 32):
;; for each 8-byte input word of lane i, `vi = rotl(vi + input * P2, 31) * P1`, all mod 2^64.
(module
  (memory (export "memory") 2)
  (func (export "stripes") (param $len i32)
    (local $at i32) (local $end i32)
    (local $v1 i64) (local $v2 i64) (local $v3 i64) (local $v4 i64)
    (local.set $v1 (i64.load offset=0 (i32.const 0)))
    (local.set $v2 (i64.load offset=8 (i32.const 0)))
    (local.set $v3 (i64.load offset=16 (i32.const 0)))
    (local.set $v4 (i64.load offset=24 (i32.const 0)))
    (local.set $at (i32.const 64))
    (local.set $end (i32.add (i32.const 64) (local.get $len)))
    (block $done
      (loop $stripe
        (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
        (local.set $v1 (i64.mul (i64.rotl (i64.add (local.get $v1)
          (i64.mul (i64.load offset=0 (local.get $at)) (i64.const 0xC2B2AE3D27D4EB4F))) (i64.const 31)) (i64.const 0x9E3779B185EBCA87)))
        (local.set $v2 (i64.mul (i64.rotl (i64.add (local.get $v2)
          (i64.mul (i64.load offset=8 (local.get $at)) (i64.const 0xC2B2AE3D27D4EB4F))) (i64.const 31)) (i64.const 0x9E3779B185EBCA87)))
        (local.set $v3 (i64.mul (i64.rotl (i64.add (local.get $v3)
          (i64.mul (i64.load offset=16 (local.get $at)) (i64.const 0xC2B2AE3D27D4EB4F))) (i64.const 31)) (i64.const 0x9E3779B185EBCA87)))
        (local.set $v4 (i64.mul (i64.rotl (i64.add (local.get $v4)
          (i64.mul (i64.load offset=24 (local.get $at)) (i64.const 0xC2B2AE3D27D4EB4F))) (i64.const 31)) (i64.const 0x9E3779B185EBCA87)))
        (local.set $at (i32.add (local.get $at) (i32.const 32)))
        (br $stripe)))
    (i64.store offset=0 (i32.const 0) (local.get $v1))
    (i64.store offset=8 (i32.const 0) (local.get $v2))
    (i64.store offset=16 (i32.const 0) (local.get $v3))
    (i64.store offset=24 (i32.const 0) (local.get $v4))))
