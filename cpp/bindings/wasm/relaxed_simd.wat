;; The GEMM's 6x8 micro-kernel with relaxed SIMD's fused multiply-add (f32x4.relaxed_madd).
;;
;; Same contract as mha::kernels::tile6_sums_simd128 (cpp/attention/mha/kernels.cpp), which it replaces
;; in the function table where the engine validates relaxed SIMD (Chrome 114+ by default;
;; node 20 only with --experimental-wasm-relaxed-simd): see relaxed_simd.js.
;;   acc[r*8 + j] = sum over k < kc of A[r*lda + k] * panel[k*8 + j],   r < 6, j < 8
;; Arguments are byte addresses in the core's memory, except kc and lda (floats). kc >= 1.
;; relaxed_madd(a, b, c) = a * b + c, rounded once where the hardware fuses it (x86 FMA3, arm64)
;; and twice elsewhere: both within the tests' float32 tolerances. Goto & van de Geijn 2008.
;; Generated into relaxed_simd.js by scripts/codegen/gen_relaxed_simd.mjs (wabt).
(module
  (import "env" "memory" (memory 0))
  (func (export "tile6_sums") (param $kc i32) (param $a0 i32) (param $lda i32) (param $p i32) (param $acc i32)
    (local $a1 i32) (local $a2 i32) (local $a3 i32) (local $a4 i32) (local $a5 i32) (local $end i32)
    (local $b0 v128) (local $b1 v128) (local $x v128)
    (local $lo0 v128) (local $lo1 v128) (local $lo2 v128) (local $lo3 v128) (local $lo4 v128) (local $lo5 v128)
    (local $hi0 v128) (local $hi1 v128) (local $hi2 v128) (local $hi3 v128) (local $hi4 v128) (local $hi5 v128)
    ;; row addresses: A + r * lda floats
    (local.set $lda (i32.shl (local.get $lda) (i32.const 2)))
    (local.set $a1 (i32.add (local.get $a0) (local.get $lda)))
    (local.set $a2 (i32.add (local.get $a1) (local.get $lda)))
    (local.set $a3 (i32.add (local.get $a2) (local.get $lda)))
    (local.set $a4 (i32.add (local.get $a3) (local.get $lda)))
    (local.set $a5 (i32.add (local.get $a4) (local.get $lda)))
    ;; the panel advances 8 floats (32 bytes) per k
    (local.set $end (i32.add (local.get $p) (i32.shl (local.get $kc) (i32.const 5))))
    (loop $k
      (local.set $b0 (v128.load (local.get $p)))
      (local.set $b1 (v128.load offset=16 (local.get $p)))
      (local.set $x (v128.load32_splat (local.get $a0)))
      (local.set $lo0 (f32x4.relaxed_madd (local.get $x) (local.get $b0) (local.get $lo0)))
      (local.set $hi0 (f32x4.relaxed_madd (local.get $x) (local.get $b1) (local.get $hi0)))
      (local.set $a0 (i32.add (local.get $a0) (i32.const 4)))
      (local.set $x (v128.load32_splat (local.get $a1)))
      (local.set $lo1 (f32x4.relaxed_madd (local.get $x) (local.get $b0) (local.get $lo1)))
      (local.set $hi1 (f32x4.relaxed_madd (local.get $x) (local.get $b1) (local.get $hi1)))
      (local.set $a1 (i32.add (local.get $a1) (i32.const 4)))
      (local.set $x (v128.load32_splat (local.get $a2)))
      (local.set $lo2 (f32x4.relaxed_madd (local.get $x) (local.get $b0) (local.get $lo2)))
      (local.set $hi2 (f32x4.relaxed_madd (local.get $x) (local.get $b1) (local.get $hi2)))
      (local.set $a2 (i32.add (local.get $a2) (i32.const 4)))
      (local.set $x (v128.load32_splat (local.get $a3)))
      (local.set $lo3 (f32x4.relaxed_madd (local.get $x) (local.get $b0) (local.get $lo3)))
      (local.set $hi3 (f32x4.relaxed_madd (local.get $x) (local.get $b1) (local.get $hi3)))
      (local.set $a3 (i32.add (local.get $a3) (i32.const 4)))
      (local.set $x (v128.load32_splat (local.get $a4)))
      (local.set $lo4 (f32x4.relaxed_madd (local.get $x) (local.get $b0) (local.get $lo4)))
      (local.set $hi4 (f32x4.relaxed_madd (local.get $x) (local.get $b1) (local.get $hi4)))
      (local.set $a4 (i32.add (local.get $a4) (i32.const 4)))
      (local.set $x (v128.load32_splat (local.get $a5)))
      (local.set $lo5 (f32x4.relaxed_madd (local.get $x) (local.get $b0) (local.get $lo5)))
      (local.set $hi5 (f32x4.relaxed_madd (local.get $x) (local.get $b1) (local.get $hi5)))
      (local.set $a5 (i32.add (local.get $a5) (i32.const 4)))
      (local.set $p (i32.add (local.get $p) (i32.const 32)))
      (br_if $k (i32.lt_u (local.get $p) (local.get $end))))
    (v128.store offset=0 (local.get $acc) (local.get $lo0))
    (v128.store offset=16 (local.get $acc) (local.get $hi0))
    (v128.store offset=32 (local.get $acc) (local.get $lo1))
    (v128.store offset=48 (local.get $acc) (local.get $hi1))
    (v128.store offset=64 (local.get $acc) (local.get $lo2))
    (v128.store offset=80 (local.get $acc) (local.get $hi2))
    (v128.store offset=96 (local.get $acc) (local.get $lo3))
    (v128.store offset=112 (local.get $acc) (local.get $hi3))
    (v128.store offset=128 (local.get $acc) (local.get $lo4))
    (v128.store offset=144 (local.get $acc) (local.get $hi4))
    (v128.store offset=160 (local.get $acc) (local.get $lo5))
    (v128.store offset=176 (local.get $acc) (local.get $hi5))))
