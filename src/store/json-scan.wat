;; The line splitter's newline search and the validating scan of one JSON Lines row (SPEC §11.2.6),
;; in WebAssembly with 128-bit SIMD. The scan checks exactly the grammar of src/store/json-scan.ts (one JSON object in valid UTF-8, as JSON.parse
;; of a fatal TextDecoder's text accepts it), and the byte ranges of the values of the top-level
;; keys "type", "seq", "time", "surfaceOp". Sound, never complete: a row it answers 0 for goes to
;; the JavaScript scan, which gives today's outcome.
;;
;; Assembled by `node scripts/make-json-scan-wasm.mjs` (wabt) into src/store/json-scan-wasm.ts.
;;
;; Memory (one page at least; the caller grows it for the bytes it copies):
;;   [0, 16)    starts of the four keys' values (i32 each, absolute addresses, -1 when absent)
;;   [16, 32)   ends of the four keys' values (exclusive)
;;   [32, 36)   times "type" occurred at the top level
;;   [64, 4096) the stack of open containers, one byte each ('{' or '['): a row nested deeper
;;              gets 0 (the JavaScript scan takes it)
;;   [4096, …)  bytes of a chunk (or one line), copied by the caller, with 16 bytes after them
;;              that may be read
(module
  (memory (export "memory") 1)

  ;; The stack's first byte and its depth limit.
  (global $STACK i32 (i32.const 64))
  (global $MAX_DEPTH i32 (i32.const 4032))

  ;; Index after JSON whitespace (space, tab, CR; a line holds no LF) from $i. dsh writes none: the
  ;; scan calls it only where the byte at $i is at most 0x20 (a call per token costs more than that test).
  (func $space (param $i i32) (result i32)
    (local $c i32)
    (loop $next
      (local.set $c (i32.load8_u (local.get $i)))
      (if (i32.or (i32.or (i32.eq (local.get $c) (i32.const 0x20)) (i32.eq (local.get $c) (i32.const 0x09)))
                  (i32.eq (local.get $c) (i32.const 0x0d)))
        (then
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $next))))
    (local.get $i))

  ;; 1 when $c is an ASCII hex digit.
  (func $hex (param $c i32) (result i32)
    (i32.or
      (i32.lt_u (i32.sub (local.get $c) (i32.const 0x30)) (i32.const 10))
      (i32.lt_u (i32.sub (i32.or (local.get $c) (i32.const 0x20)) (i32.const 0x61)) (i32.const 6))))

  ;; 1 when $c is a UTF-8 continuation byte.
  (func $cont (param $c i32) (result i32)
    (i32.eq (i32.and (local.get $c) (i32.const 0xc0)) (i32.const 0x80)))

  ;; Index after the string whose opening quote is at $i - 1, or -1. Runs of plain bytes
  ;; (printable ASCII but '"' and '\') pass 16 at a time; the row's end is a byte the caller set
  ;; to LF, a control byte, so no run and no sequence passes it.
  (func $string (param $i i32) (result i32)
    (local $v v128) (local $mask i32) (local $c i32) (local $c1 i32)
    (loop $next
      (block $found
        (loop $run
          (local.set $v (v128.load (local.get $i)))
          (local.set $mask
            (i8x16.bitmask
              (v128.or
                (v128.or
                  ;; controls and bytes over 0x7F (negative as signed bytes)
                  (i8x16.lt_s (local.get $v) (v128.const i8x16 32 32 32 32 32 32 32 32 32 32 32 32 32 32 32 32))
                  (i8x16.eq (local.get $v) (v128.const i8x16 34 34 34 34 34 34 34 34 34 34 34 34 34 34 34 34)))
                (i8x16.eq (local.get $v) (v128.const i8x16 92 92 92 92 92 92 92 92 92 92 92 92 92 92 92 92)))))
          (br_if $found (local.get $mask))
          (local.set $i (i32.add (local.get $i) (i32.const 16)))
          (br $run)))
      (local.set $i (i32.add (local.get $i) (i32.ctz (local.get $mask))))
      (local.set $c (i32.load8_u (local.get $i)))
      (local.set $c1 (i32.load8_u offset=1 (local.get $i)))
      (if (i32.eq (local.get $c) (i32.const 0x22)) (then (return (i32.add (local.get $i) (i32.const 1)))))
      (if (i32.eq (local.get $c) (i32.const 0x5c))
        (then
          (if (i32.eq (local.get $c1) (i32.const 0x75))
            (then
              (if (i32.eqz
                    (i32.and
                      (i32.and (call $hex (i32.load8_u offset=2 (local.get $i))) (call $hex (i32.load8_u offset=3 (local.get $i))))
                      (i32.and (call $hex (i32.load8_u offset=4 (local.get $i))) (call $hex (i32.load8_u offset=5 (local.get $i))))))
                (then (return (i32.const -1))))
              (local.set $i (i32.add (local.get $i) (i32.const 6)))
              (br $next)))
          ;; '"' '\' '/' 'b' 'f' 'n' 'r' 't'
          (if (i32.or
                (i32.or
                  (i32.or (i32.eq (local.get $c1) (i32.const 0x22)) (i32.eq (local.get $c1) (i32.const 0x5c)))
                  (i32.or (i32.eq (local.get $c1) (i32.const 0x2f)) (i32.eq (local.get $c1) (i32.const 0x62))))
                (i32.or
                  (i32.or (i32.eq (local.get $c1) (i32.const 0x66)) (i32.eq (local.get $c1) (i32.const 0x6e)))
                  (i32.or (i32.eq (local.get $c1) (i32.const 0x72)) (i32.eq (local.get $c1) (i32.const 0x74)))))
            (then
              (local.set $i (i32.add (local.get $i) (i32.const 2)))
              (br $next)))
          (return (i32.const -1))))
      ;; a control byte, the row's end among them
      (if (i32.lt_u (local.get $c) (i32.const 0x80)) (then (return (i32.const -1))))
      ;; UTF-8: overlong forms, surrogates and code points over U+10FFFF refused
      (if (i32.le_u (i32.sub (local.get $c) (i32.const 0xc2)) (i32.const 0x1d))
        (then
          (if (i32.eqz (call $cont (local.get $c1))) (then (return (i32.const -1))))
          (local.set $i (i32.add (local.get $i) (i32.const 2)))
          (br $next)))
      (if (i32.le_u (i32.sub (local.get $c) (i32.const 0xe0)) (i32.const 0x0f))
        (then
          (if (i32.or
                (i32.or
                  (i32.lt_u (local.get $c1) (select (i32.const 0xa0) (i32.const 0x80) (i32.eq (local.get $c) (i32.const 0xe0))))
                  (i32.gt_u (local.get $c1) (select (i32.const 0x9f) (i32.const 0xbf) (i32.eq (local.get $c) (i32.const 0xed)))))
                (i32.eqz (call $cont (i32.load8_u offset=2 (local.get $i)))))
            (then (return (i32.const -1))))
          (local.set $i (i32.add (local.get $i) (i32.const 3)))
          (br $next)))
      (if (i32.le_u (i32.sub (local.get $c) (i32.const 0xf0)) (i32.const 0x04))
        (then
          (if (i32.or
                (i32.or
                  (i32.lt_u (local.get $c1) (select (i32.const 0x90) (i32.const 0x80) (i32.eq (local.get $c) (i32.const 0xf0))))
                  (i32.gt_u (local.get $c1) (select (i32.const 0x8f) (i32.const 0xbf) (i32.eq (local.get $c) (i32.const 0xf4)))))
                (i32.eqz
                  (i32.and (call $cont (i32.load8_u offset=2 (local.get $i))) (call $cont (i32.load8_u offset=3 (local.get $i))))))
            (then (return (i32.const -1))))
          (local.set $i (i32.add (local.get $i) (i32.const 4)))
          (br $next)))
      (return (i32.const -1)))
    (unreachable))

  ;; 1 when $c is an ASCII digit.
  (func $digit (param $c i32) (result i32)
    (i32.lt_u (i32.sub (local.get $c) (i32.const 0x30)) (i32.const 10)))

  ;; Index after the digits from $i.
  (func $digits (param $i i32) (result i32)
    (loop $next
      (if (i32.lt_u (i32.sub (i32.load8_u (local.get $i)) (i32.const 0x30)) (i32.const 10))
        (then
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $next))))
    (local.get $i))

  ;; Index after the JSON number at $i, or -1: -? (0 | [1-9]\d*) (\.\d+)? ([eE][+-]?\d+)?
  (func $number (param $i i32) (result i32)
    (local $c i32)
    (if (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x2d)) (then (local.set $i (i32.add (local.get $i) (i32.const 1)))))
    (local.set $c (i32.load8_u (local.get $i)))
    (if (i32.eq (local.get $c) (i32.const 0x30))
      (then (local.set $i (i32.add (local.get $i) (i32.const 1))))
      (else
        (if (i32.eqz (call $digit (local.get $c))) (then (return (i32.const -1))))
        (local.set $i (call $digits (local.get $i)))))
    (if (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x2e))
      (then
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (if (i32.eqz (call $digit (i32.load8_u (local.get $i)))) (then (return (i32.const -1))))
        (local.set $i (call $digits (local.get $i)))))
    (if (i32.eq (i32.or (i32.load8_u (local.get $i)) (i32.const 0x20)) (i32.const 0x65))
      (then
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (local.set $c (i32.load8_u (local.get $i)))
        (if (i32.or (i32.eq (local.get $c) (i32.const 0x2b)) (i32.eq (local.get $c) (i32.const 0x2d)))
          (then (local.set $i (i32.add (local.get $i) (i32.const 1)))))
        (if (i32.eqz (call $digit (i32.load8_u (local.get $i)))) (then (return (i32.const -1))))
        (local.set $i (call $digits (local.get $i)))))
    (local.get $i))

  ;; Index after the scalar value (string, number, true, false, null) at $i, or -1.
  (func $scalar (param $i i32) (result i32)
    (local $c i32)
    (local.set $c (i32.load8_u (local.get $i)))
    (if (i32.eq (local.get $c) (i32.const 0x22)) (then (return (call $string (i32.add (local.get $i) (i32.const 1))))))
    (if (i32.eq (local.get $c) (i32.const 0x74)) ;; true
      (then (return (select (i32.add (local.get $i) (i32.const 4)) (i32.const -1)
                      (i32.eq (i32.load (local.get $i)) (i32.const 0x65757274))))))
    (if (i32.eq (local.get $c) (i32.const 0x66)) ;; false
      (then (return (select (i32.add (local.get $i) (i32.const 5)) (i32.const -1)
                      (i32.eq (i32.load offset=1 (local.get $i)) (i32.const 0x65736c61))))))
    (if (i32.eq (local.get $c) (i32.const 0x6e)) ;; null
      (then (return (select (i32.add (local.get $i) (i32.const 4)) (i32.const -1)
                      (i32.eq (i32.load (local.get $i)) (i32.const 0x6c6c756e))))))
    (call $number (local.get $i)))

  ;; The id of the key in bytes [$start, $end) (no escapes): 1 type, 2 seq, 3 time, 4 surfaceOp, 0 other.
  (func $key (param $start i32) (param $end i32) (result i32)
    (local $length i32) (local $word i32)
    (local.set $length (i32.sub (local.get $end) (local.get $start)))
    (if (i32.eq (local.get $length) (i32.const 4))
      (then
        (local.set $word (i32.load (local.get $start)))
        (if (i32.eq (local.get $word) (i32.const 0x65707974)) (then (return (i32.const 1))))
        (if (i32.eq (local.get $word) (i32.const 0x656d6974)) (then (return (i32.const 3))))
        (return (i32.const 0))))
    (if (i32.eq (local.get $length) (i32.const 3))
      (then
        (return (select (i32.const 2) (i32.const 0)
                  (i32.and (i32.eq (i32.load16_u (local.get $start)) (i32.const 0x6573))
                           (i32.eq (i32.load8_u offset=2 (local.get $start)) (i32.const 0x71)))))))
    (if (i32.eq (local.get $length) (i32.const 9))
      (then
        (return (select (i32.const 4) (i32.const 0)
                  (i32.and (i64.eq (i64.load (local.get $start)) (i64.const 0x4f65636166727573))
                           (i32.eq (i32.load8_u offset=8 (local.get $start)) (i32.const 0x70)))))))
    (i32.const 0))

  ;; 1 when bytes [$start, $end) hold a backslash.
  (func $escaped (param $start i32) (param $end i32) (result i32)
    (loop $next
      (if (i32.lt_u (local.get $start) (local.get $end))
        (then
          (if (i32.eq (i32.load8_u (local.get $start)) (i32.const 0x5c)) (then (return (i32.const 1))))
          (local.set $start (i32.add (local.get $start) (i32.const 1)))
          (br $next))))
    (i32.const 0))

  ;; The address of the first LF in [$from, $to), or $to when there is none: 16 bytes a step
  ;; (the 16 bytes after $to may be read).
  (func (export "newline") (param $from i32) (param $to i32) (result i32)
    (local $mask i32)
    (loop $next
      (local.set $mask
        (i8x16.bitmask (i8x16.eq (v128.load (local.get $from)) (v128.const i8x16 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10))))
      (if (local.get $mask)
        (then
          (local.set $from (i32.add (local.get $from) (i32.ctz (local.get $mask))))
          (return (select (local.get $from) (local.get $to) (i32.lt_u (local.get $from) (local.get $to))))))
      (local.set $from (i32.add (local.get $from) (i32.const 16)))
      (br_if $next (i32.lt_u (local.get $from) (local.get $to))))
    (local.get $to))

  ;; Scans the row in bytes [$start, $end): 1 when it is one JSON object in valid UTF-8 whose
  ;; top-level keys have no escapes (the ranges and the count of "type" written at [0, 36)),
  ;; 0 when not or when it cannot say (nesting over the stack). The byte at $end is set to LF
  ;; for the scan and put back after; the 16 bytes after $end are read.
  (func (export "scan") (param $start i32) (param $end i32) (result i32)
    (local $saved i32) (local $result i32)
    (local.set $saved (i32.load8_u (local.get $end)))
    (i32.store8 (local.get $end) (i32.const 0x0a))
    (local.set $result (call $row (local.get $start) (local.get $end)))
    (i32.store8 (local.get $end) (local.get $saved))
    (local.get $result))

  (func $row (param $start i32) (param $end i32) (result i32)
    (local $i i32) (local $c i32) (local $depth i32) (local $key i32) (local $expectKey i32)
    (local $types i32) (local $keyStart i32) (local $top i32)
    (i64.store (i32.const 0) (i64.const -1))
    (i64.store (i32.const 8) (i64.const -1))
    (local.set $i (call $space (local.get $start)))
    (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x7b)) (then (return (i32.const 0))))
    (loop $value
      (if (local.get $expectKey)
        (then
          ;; after '{' or ',' in an object: a key, ':', then a value
          (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $space (local.get $i)))))
          (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x22)) (then (return (i32.const 0))))
          (local.set $keyStart (i32.add (local.get $i) (i32.const 1)))
          (local.set $i (call $string (local.get $keyStart)))
          (if (i32.lt_s (local.get $i) (i32.const 0)) (then (return (i32.const 0))))
          (if (i32.eq (local.get $depth) (i32.const 1))
            (then
              (if (call $escaped (local.get $keyStart) (i32.sub (local.get $i) (i32.const 1))) (then (return (i32.const 0))))
              (local.set $key (call $key (local.get $keyStart) (i32.sub (local.get $i) (i32.const 1))))
              (if (i32.eq (local.get $key) (i32.const 1)) (then (local.set $types (i32.add (local.get $types) (i32.const 1)))))))
          (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $space (local.get $i)))))
          (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x3a)) (then (return (i32.const 0))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (local.set $expectKey (i32.const 0))))
      ;; a value
      (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $space (local.get $i)))))
      (if (i32.and (i32.ne (local.get $key) (i32.const 0)) (i32.eq (local.get $depth) (i32.const 1)))
        (then (i32.store (i32.shl (i32.sub (local.get $key) (i32.const 1)) (i32.const 2)) (local.get $i))))
      (local.set $c (i32.load8_u (local.get $i)))
      (if (i32.eq (i32.and (local.get $c) (i32.const 0xdf)) (i32.const 0x5b)) ;; '{' or '['
        (then
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $space (local.get $i)))))
          (if (i32.ne (i32.load8_u (local.get $i)) (i32.add (local.get $c) (i32.const 2))) ;; not '}' or ']'
            (then
              (if (i32.ge_u (local.get $depth) (global.get $MAX_DEPTH)) (then (return (i32.const 0))))
              (i32.store8 (i32.add (global.get $STACK) (local.get $depth)) (local.get $c))
              (local.set $depth (i32.add (local.get $depth) (i32.const 1)))
              (if (i32.eq (local.get $depth) (i32.const 1)) (then (local.set $key (i32.const 0))))
              (local.set $expectKey (i32.eq (local.get $c) (i32.const 0x7b)))
              (br $value)))
          (local.set $i (i32.add (local.get $i) (i32.const 1))))
        (else
          (local.set $i (call $scalar (local.get $i)))
          (if (i32.lt_s (local.get $i) (i32.const 0)) (then (return (i32.const 0))))))
      ;; after a value: ',' or the container's close, as many times as containers close
      (loop $after
        (if (i32.and (i32.eq (local.get $depth) (i32.const 1)) (i32.ne (local.get $key) (i32.const 0)))
          (then
            (i32.store offset=16 (i32.shl (i32.sub (local.get $key) (i32.const 1)) (i32.const 2)) (local.get $i))
            (local.set $key (i32.const 0))))
        (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $space (local.get $i)))))
        (if (i32.eqz (local.get $depth))
          (then
            (i32.store (i32.const 32) (local.get $types))
            (return (i32.eq (local.get $i) (local.get $end)))))
        (local.set $c (i32.load8_u (local.get $i)))
        (local.set $top (i32.load8_u (i32.add (global.get $STACK) (i32.sub (local.get $depth) (i32.const 1)))))
        (if (i32.eq (local.get $c) (i32.const 0x2c))
          (then
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (local.set $expectKey (i32.eq (local.get $top) (i32.const 0x7b)))
            (br $value)))
        (if (i32.eq (local.get $c) (i32.add (local.get $top) (i32.const 2)))
          (then
            (local.set $depth (i32.sub (local.get $depth) (i32.const 1)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $after)))
        (return (i32.const 0))))
    (unreachable))
)
