#include "textflag.h"

// func addMasked(dst, a, b *[16]float32, mask uint16)
TEXT ·addMasked(SB), NOSPLIT, $0-26
	MOVQ    dst+0(FP), DI
	MOVQ    a+8(FP), SI
	MOVQ    b+16(FP), DX
	MOVWLZX mask+24(FP), AX
	KMOVW   AX, K1
	VMOVUPS (SI), Z0
	VADDPS  (DX), Z0, Z1
	VMOVUPS Z1, K1, (DI)
	VZEROUPPER
	RET
