;; XXH64 (SPEC §11.2: zstd content checksums): the stripe loop and the digest, as WebAssembly, for
;; src/store/xxhash64.ts. Compiled by scripts/make-xxh64-wasm.mjs into src/store/xxhash64-wasm.ts;
;; test/xxhash64-wasm.node.test.ts checks that file is this one compiled.
;;
;; Memory layout: the four lanes v1..v4 as little-endian u64 at bytes 0..31, the digest at 32..39,
;; the input from byte 64 on. All arithmetic is mod 2^64.
;; - `stripes(len)` runs the lanes over the `len` bytes at 64 (`len` a multiple of 32): for each
;;   8-byte input word of lane i, `vi = round(vi, input)`.
;; - `digest(total, len)` finishes the hash of `total` bytes whose last `len` (< 32) bytes are at 64
;;   and whose earlier stripes went through the lanes, and stores it at 32.
(module
  (memory (export "memory") 2)
  (global $P1 i64 (i64.const 0x9E3779B185EBCA87))
  (global $P2 i64 (i64.const 0xC2B2AE3D27D4EB4F))
  (global $P3 i64 (i64.const 0x165667B19E3779F9))
  (global $P4 i64 (i64.const 0x85EBCA77C2B2AE63))
  (global $P5 i64 (i64.const 0x27D4EB2F165667C5))

  ;; round(acc, input) = rotl(acc + input * P2, 31) * P1
  (func $round (param $acc i64) (param $input i64) (result i64)
    (i64.mul (i64.rotl (i64.add (local.get $acc) (i64.mul (local.get $input) (global.get $P2))) (i64.const 31)) (global.get $P1)))

  ;; merge(h, v) = (h ^ round(0, v)) * P1 + P4
  (func $merge (param $h i64) (param $v i64) (result i64)
    (i64.add (i64.mul (i64.xor (local.get $h) (call $round (i64.const 0) (local.get $v))) (global.get $P1)) (global.get $P4)))

  (func (export "digest") (param $total f64) (param $len i32)
    (local $h i64) (local $at i32) (local $end i32)
    (local $v1 i64) (local $v2 i64) (local $v3 i64) (local $v4 i64)
    (local.set $v1 (i64.load offset=0 (i32.const 0)))
    (local.set $v2 (i64.load offset=8 (i32.const 0)))
    (local.set $v3 (i64.load offset=16 (i32.const 0)))
    (local.set $v4 (i64.load offset=24 (i32.const 0)))
    (if (f64.ge (local.get $total) (f64.const 32))
      (then
        (local.set $h (i64.add (i64.add (i64.rotl (local.get $v1) (i64.const 1)) (i64.rotl (local.get $v2) (i64.const 7)))
          (i64.add (i64.rotl (local.get $v3) (i64.const 12)) (i64.rotl (local.get $v4) (i64.const 18)))))
        (local.set $h (call $merge (local.get $h) (local.get $v1)))
        (local.set $h (call $merge (local.get $h) (local.get $v2)))
        (local.set $h (call $merge (local.get $h) (local.get $v3)))
        (local.set $h (call $merge (local.get $h) (local.get $v4))))
      (else (local.set $h (global.get $P5))))
    (local.set $h (i64.add (local.get $h) (i64.trunc_f64_u (local.get $total))))
    (local.set $at (i32.const 64))
    (local.set $end (i32.add (i32.const 64) (local.get $len)))
    (block $words
      (loop $word
        (br_if $words (i32.gt_u (i32.add (local.get $at) (i32.const 8)) (local.get $end)))
        (local.set $h (i64.add (i64.mul (i64.rotl
          (i64.xor (local.get $h) (call $round (i64.const 0) (i64.load (local.get $at)))) (i64.const 27)) (global.get $P1)) (global.get $P4)))
        (local.set $at (i32.add (local.get $at) (i32.const 8)))
        (br $word)))
    (if (i32.le_u (i32.add (local.get $at) (i32.const 4)) (local.get $end))
      (then
        (local.set $h (i64.add (i64.mul (i64.rotl
          (i64.xor (local.get $h) (i64.mul (i64.load32_u (local.get $at)) (global.get $P1))) (i64.const 23)) (global.get $P2)) (global.get $P3)))
        (local.set $at (i32.add (local.get $at) (i32.const 4)))))
    (block $bytes
      (loop $byte
        (br_if $bytes (i32.ge_u (local.get $at) (local.get $end)))
        (local.set $h (i64.mul (i64.rotl
          (i64.xor (local.get $h) (i64.mul (i64.load8_u (local.get $at)) (global.get $P5))) (i64.const 11)) (global.get $P1)))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $byte)))
    ;; avalanche
    (local.set $h (i64.mul (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 33))) (global.get $P2)))
    (local.set $h (i64.mul (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 29))) (global.get $P3)))
    (i64.store offset=32 (i32.const 0) (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 32)))))

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
        ;; vi = round(vi, input), written out: this loop is where the time goes.
        (local.set $v1 (i64.mul (i64.rotl (i64.add (local.get $v1)
          (i64.mul (i64.load offset=0 (local.get $at)) (global.get $P2))) (i64.const 31)) (global.get $P1)))
        (local.set $v2 (i64.mul (i64.rotl (i64.add (local.get $v2)
          (i64.mul (i64.load offset=8 (local.get $at)) (global.get $P2))) (i64.const 31)) (global.get $P1)))
        (local.set $v3 (i64.mul (i64.rotl (i64.add (local.get $v3)
          (i64.mul (i64.load offset=16 (local.get $at)) (global.get $P2))) (i64.const 31)) (global.get $P1)))
        (local.set $v4 (i64.mul (i64.rotl (i64.add (local.get $v4)
          (i64.mul (i64.load offset=24 (local.get $at)) (global.get $P2))) (i64.const 31)) (global.get $P1)))
        (local.set $at (i32.add (local.get $at) (i32.const 32)))
        (br $stripe)))
    (i64.store offset=0 (i32.const 0) (local.get $v1))
    (i64.store offset=8 (i32.const 0) (local.get $v2))
    (i64.store offset=16 (i32.const 0) (local.get $v3))
    (i64.store offset=24 (i32.const 0) (local.get $v4))))
