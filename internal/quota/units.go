package quota

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// DecimalFromFloat returns the shortest decimal that converts back to f, as an exact rational:
// 2.9 (whose binary value is 2.899999999999999911...) becomes exactly 29/10. Terraform hands the
// provider float64 values; this recovers the decimal the user wrote. It returns nil for NaN and
// infinities, which no attribute accepts.
func DecimalFromFloat(f float64) *big.Rat {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok { // cannot happen: FormatFloat output always parses
		return new(big.Rat).SetFloat64(f)
	}
	return r
}

// The SageMaker API holds vCPU and memory as 32-bit floats. Computed values sit on a grid
// (millicores for vCPU, MiB for memory) and configured ones are short decimals, so a float32 is
// read back as the grid point it holds, or else as the shortest decimal that is that float32.
const (
	VCPUGrid   = 1000 // millicores per vCPU
	MemoryGrid = 1024 // MiB per GiB
)

// DecimalFromFloat32 reads an amount the API holds as a float32 back into the decimal sent.
func DecimalFromFloat32(f float32, grid int64) *big.Rat {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return new(big.Rat)
	}
	if onGrid := gridPoint(f, grid); float32Of(onGrid) == f {
		return onGrid
	}
	r, _ := new(big.Rat).SetString(strconv.FormatFloat(float64(f), 'g', -1, 32))
	return r
}

// SurvivesFloat32 reports whether v, sent to the API as a float32, reads back as v.
func SurvivesFloat32(v *big.Rat, grid int64) bool {
	return DecimalFromFloat32(float32Of(v), grid).Cmp(v) == 0
}

// gridPoint is the multiple of 1/grid nearest to f.
func gridPoint(f float32, grid int64) *big.Rat {
	g := ratInt(grid)
	return new(big.Rat).SetFrac(roundInt(new(big.Rat).Mul(new(big.Rat).SetFloat64(float64(f)), g)), g.Num())
}

func float32Of(v *big.Rat) float32 {
	f, _ := v.Float32()
	return f
}

// An amountFloor rounds a computed amount down to a multiple of 1/grid that the store holds
// exactly: floorExact for Kubernetes quantities, floorFloat32 for the SageMaker API.
type amountFloor func(x *big.Rat, grid int64) *big.Rat

func floorExact(x *big.Rat, grid int64) *big.Rat { return floorTo(x, grid) }

// floorFloat32 is the largest multiple of 1/grid, at most x, that survives the float32 round
// trip. Below 16384 that is floorTo(x, grid), since a float32 there is finer than a millicore
// and holds every MiB; above it a float32 is coarser than the grid, and the amount steps down
// to the grid point nearest the float32 below.
func floorFloat32(x *big.Rat, grid int64) *big.Rat {
	v := floorTo(x, grid)
	if SurvivesFloat32(v, grid) {
		return v
	}
	f := float32Of(v)
	if new(big.Rat).SetFloat64(float64(f)).Cmp(v) > 0 {
		f = math.Nextafter32(f, 0)
	}
	// Each float32 below v names one grid point, the nearest to it, which survives when the
	// float32 is the one nearest to that point: the first that does is the largest.
	for ; f > 0; f = math.Nextafter32(f, 0) {
		if p := gridPoint(f, grid); p.Cmp(v) <= 0 && float32Of(p) == f {
			return p
		}
	}
	return new(big.Rat)
}

// FloatFromRat returns the float64 nearest to r (0 for nil), for handing values to Terraform.
func FloatFromRat(r *big.Rat) float64 {
	if r == nil {
		return 0
	}
	f, _ := r.Float64()
	return f
}

// RatString formats r exactly: as a decimal ("2.9", "41.142578125", "48") when it has a finite
// decimal expansion, otherwise as a fraction ("1/3").
func RatString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	if n, ok := decimalPlaces(r); ok {
		return strings.TrimRight(strings.TrimRight(r.FloatString(n), "0"), ".")
	}
	return r.RatString()
}

// decimalPlaces returns how many decimal places r needs, when its expansion is finite.
func decimalPlaces(r *big.Rat) (int, bool) {
	d := new(big.Int).Set(r.Denom())
	two, five := big.NewInt(2), big.NewInt(5)
	m := new(big.Int)
	var twos, fives int
	for {
		q, rem := new(big.Int).QuoRem(d, two, m)
		if rem.Sign() != 0 {
			break
		}
		d, twos = q, twos+1
	}
	for {
		q, rem := new(big.Int).QuoRem(d, five, m)
		if rem.Sign() != 0 {
			break
		}
		d, fives = q, fives+1
	}
	if d.Cmp(big.NewInt(1)) != 0 {
		return 0, false
	}
	return max(twos, fives), true
}

// parseRat parses RatString output (and any decimal or fraction big.Rat accepts).
func parseRat(s string) (*big.Rat, bool) {
	return new(big.Rat).SetString(s)
}

func ratInt(n int64) *big.Rat { return new(big.Rat).SetInt64(n) }

// floorTo rounds x down to a multiple of 1/denom.
func floorTo(x *big.Rat, denom int64) *big.Rat {
	n := new(big.Int).Mul(x.Num(), big.NewInt(denom))
	n.Div(n, x.Denom()) // Euclidean division by a positive number is floor
	return new(big.Rat).SetFrac(n, big.NewInt(denom))
}

// floorInt is floor(x).
func floorInt(x *big.Rat) *big.Int {
	return new(big.Int).Div(x.Num(), x.Denom())
}

// ceilInt is ceil(x).
func roundInt(x *big.Rat) *big.Int {
	return floorInt(new(big.Rat).Add(x, big.NewRat(1, 2)))
}

func ceilInt(x *big.Rat) *big.Int {
	n := floorInt(new(big.Rat).Neg(x))
	return n.Neg(n)
}

// satInt64 is floor(x), saturated to the int64 range so absurd inputs cannot wrap around.
func satInt64(x *big.Rat) int64 {
	n := floorInt(x)
	switch {
	case n.IsInt64():
		return n.Int64()
	case n.Sign() > 0:
		return math.MaxInt64
	default:
		return math.MinInt64
	}
}

var bytesPerGiB = new(big.Rat).SetInt64(1 << 30)

func gibToBytes(gib *big.Rat) *big.Rat { return new(big.Rat).Mul(gib, bytesPerGiB) }

func bytesToGiB(b *big.Rat) *big.Rat { return new(big.Rat).Quo(b, bytesPerGiB) }

// unitOf is the amount borrowing limits are rounded down to: a millicore for cpu, a MiB for
// memory, one device otherwise.
func unitOf(res string) *big.Rat {
	switch res {
	case ResourceCPU:
		return big.NewRat(1, 1000)
	case ResourceMemory:
		return new(big.Rat).SetInt64(1 << 20)
	default:
		return new(big.Rat).SetInt64(1)
	}
}

func orZero(r *big.Rat) *big.Rat {
	if r == nil {
		return new(big.Rat)
	}
	return r
}

// quantityFor converts an exact amount (cores, bytes or devices) to a Quantity, refusing
// amounts it cannot hold exactly: cpu must be whole millicores and devices whole numbers.
func quantityFor(res string, v *big.Rat) (resource.Quantity, error) {
	switch res {
	case ResourceCPU:
		if !new(big.Rat).Mul(v, ratInt(1000)).IsInt() {
			return resource.Quantity{}, fmt.Errorf("%s cores is not a whole number of millicores", RatString(v))
		}
		return exactQuantity(v, resource.DecimalSI)
	case ResourceMemory:
		return exactQuantity(v, resource.BinarySI)
	default:
		if !v.IsInt() {
			return resource.Quantity{}, fmt.Errorf("%s is not a whole number of devices", RatString(v))
		}
		return exactQuantity(v, resource.DecimalSI)
	}
}

// exactQuantity returns v as a Quantity without rounding, or an error when a Quantity cannot
// hold it (more precise than a nano-unit).
func exactQuantity(v *big.Rat, format resource.Format) (resource.Quantity, error) {
	if v.IsInt() && v.Num().IsInt64() {
		return *resource.NewQuantity(v.Num().Int64(), format), nil
	}
	if m := new(big.Rat).Mul(v, ratInt(1000)); m.IsInt() && m.Num().IsInt64() {
		return *resource.NewMilliQuantity(m.Num().Int64(), format), nil
	}
	if n, ok := decimalPlaces(v); !ok || n > 9 {
		return resource.Quantity{}, fmt.Errorf("%s cannot be held exactly by a Kubernetes quantity (at most 9 decimal places)", RatString(v))
	}
	// Decimal notation is not capped the way binary-SI is, so huge values stay exact.
	q, err := resource.ParseQuantity(RatString(v))
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("%s: %w", RatString(v), err)
	}
	return q, nil
}

// ratFromQuantity returns the exact value of q.
func ratFromQuantity(q resource.Quantity) *big.Rat {
	d := q.AsDec() // q is a copy, so converting its representation is harmless
	r := new(big.Rat).SetInt(d.UnscaledBig())
	scale := int64(d.Scale())
	pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(abs64(scale)), nil)
	if scale > 0 {
		return r.Quo(r, new(big.Rat).SetInt(pow))
	}
	return r.Mul(r, new(big.Rat).SetInt(pow))
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// toInt64 is floor(r), or an error when it does not fit an attribute.
func toInt64(r *big.Rat, what string) (int64, error) {
	n := floorInt(r)
	if !n.IsInt64() {
		return 0, fmt.Errorf("%s %s does not fit a 64-bit integer", what, RatString(r))
	}
	return n.Int64(), nil
}

func ratPtrEqual(a, b *big.Rat) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Cmp(b) == 0
}

// memoryRepresentable reports whether gib GiB is a whole number of nanobytes.
func memoryRepresentable(gib *big.Rat) bool {
	return new(big.Rat).Mul(gibToBytes(gib), ratInt(1_000_000_000)).IsInt()
}

// inUnits converts a quantity to the attribute units: GiB for memory, the plain number otherwise.
func inUnits(res string, q resource.Quantity) *big.Rat {
	v := ratFromQuantity(q)
	if res == ResourceMemory {
		return bytesToGiB(v)
	}
	return v
}
