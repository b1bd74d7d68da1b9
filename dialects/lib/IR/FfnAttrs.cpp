//===- FfnAttrs.cpp - ffn dialect attributes ------------------------------===//

#include "AttrSyntax.h"

#include "ffn/IR/FfnAttrs.h"
#include "ffn/IR/FfnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

#include <charconv>
#include <cmath>

using namespace mlir;
using namespace mlir::ffn;

#include "ffn/IR/FfnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "ffn/IR/FfnAttrs.cpp.inc"

LogicalResult NormAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               NormKind kind, NormPosition position,
                               llvm::APFloat eps) {
  double value = eps.convertToDouble();
  // eps guards a division by sqrt(variance + eps): zero, negative or
  // non-finite values make the kernel produce Inf/NaN on constant rows.
  if (!(value > 0.0) || !std::isfinite(value))
    return emitError() << "norm eps must be positive and finite, got " << value;
  return success();
}

LogicalResult
WeightQuantAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        WeightQuantKind kind, int64_t group,
                        bool int8Activations, bool zeroPoints) {
  // Even: int4 weights are packed two input rows to a byte.
  if (group < 2 || group > 65536 || group % 2 != 0)
    return emitError() << "weight_quant group must be even and in [2, "
                          "65536], got "
                       << group;
  if (zeroPoints && kind != WeightQuantKind::int4)
    return emitError() << "weight_quant zero_points are for int4";
  // Whole 16-byte vectors of quantized activations per group.
  if (int8Activations && group % 16 != 0)
    return emitError() << "weight_quant with int8_activations needs a group "
                          "that is a multiple of 16, got "
                       << group;
  return success();
}

// <layernorm, post, eps = 1.0e-12>
Attribute NormAttr::parse(AsmParser &parser, Type) {
  StringRef kindWord, positionWord;
  double eps;
  SMLoc kindLoc, positionLoc;
  if (parser.parseLess() || parser.getCurrentLocation(&kindLoc) ||
      parser.parseKeyword(&kindWord) || parser.parseComma() ||
      parser.getCurrentLocation(&positionLoc) ||
      parser.parseKeyword(&positionWord) || parser.parseComma() ||
      parser.parseKeyword("eps") || parser.parseEqual() ||
      parser.parseFloat(eps) || parser.parseGreater())
    return {};
  std::optional<NormKind> kind = symbolizeNormKind(kindWord);
  if (!kind) {
    parser.emitError(kindLoc) << "unknown norm kind '" << kindWord
                              << "' (expected layernorm or rmsnorm)";
    return {};
  }
  std::optional<NormPosition> position = symbolizeNormPosition(positionWord);
  if (!position) {
    parser.emitError(positionLoc) << "unknown norm position '" << positionWord
                                  << "' (expected pre or post)";
    return {};
  }
  return NormAttr::getChecked(
      [&] { return parser.emitError(parser.getNameLoc()); },
      parser.getContext(), *kind, *position, llvm::APFloat(eps));
}

void NormAttr::print(AsmPrinter &printer) const {
  std::string eps = floatLiteral(getEps().convertToDouble());
  printer << "<" << stringifyNormKind(getKind()) << ", "
          << stringifyNormPosition(getPosition()) << ", eps = " << eps << ">";
}

void FfnDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ffn/IR/FfnAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// The kernel contract
//===----------------------------------------------------------------------===//

LogicalResult
KernelAbiAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      int64_t dModel, int64_t dFf, Type storage, Activation,
                      bool, bool, NormAttr, WeightQuantAttr weightQuant,
                      MoeAttr moe, int64_t groups, StringRef, Type operandType,
                      ArrayAttr params, std::optional<int64_t> workspacePerRow,
                      ArrayAttr phaseUnits, DenseI64ArrayAttr bucketMaxM,
                      StringRef, StringAttr deviceModule, ArrayAttr launches) {
  if (dModel < 1 || dFf < 1)
    return emitError() << "d_model and d_ff must be positive";
  if (groups != 0 && (groups < 2 || moe || dModel % groups || dFf % groups))
    return emitError() << "groups = " << groups
                       << " must be 0 (not grouped) or at least 2, divide "
                          "d_model and d_ff, and exclude moe";
  if (!storage.isF32() && !storage.isBF16() && !storage.isF16())
    return emitError() << "storage must be f32, bf16 or f16, got " << storage;
  if (!operandType.isF32() && operandType != storage &&
      !operandType.isInteger(8))
    return emitError() << "operand_type must be f32, the storage type or i8";
  if (operandType.isInteger(8) !=
      (weightQuant && weightQuant.getInt8Activations()))
    return emitError() << "operand_type = i8 goes with a weight_quant that "
                          "has int8_activations";
  for (Attribute p : params) {
    auto param = dyn_cast<KernelParamAttr>(p);
    if (!param)
      return emitError() << "params must be #ffn.kernel_param attributes";
    // Stacked parameters hold every expert's, routed and shared, or every
    // block's.
    int64_t experts = moe ? moe.totalExperts() : groups;
    if (param.getExperts() != experts && param.getName() != "w_router" &&
        param.getName() != "norm_scale" && param.getName() != "norm_shift")
      return emitError() << "parameter '" << param.getName() << "' has "
                         << param.getExperts() << " experts, the kernel "
                         << experts;
  }
  if (workspacePerRow && *workspacePerRow < 0)
    return emitError() << "workspace_per_row must not be negative";
  if (bool(phaseUnits) != bool(bucketMaxM))
    return emitError() << "phase_units and bucket_max_m go together";
  if (phaseUnits) {
    if (phaseUnits.empty() ||
        static_cast<int64_t>(phaseUnits.size()) != bucketMaxM.size())
      return emitError() << "one bucket_max_m per bucket of phase_units";
    int64_t phases = -1;
    for (Attribute bucket : phaseUnits) {
      auto row = dyn_cast<DenseI64ArrayAttr>(bucket);
      if (!row || (phases >= 0 && row.size() != phases))
        return emitError()
               << "phase_units must be i64 arrays of one length per bucket";
      phases = row.size();
    }
  }
  if (bool(deviceModule) != bool(launches))
    return emitError() << "device_module and launches go together";
  if (launches)
    for (Attribute l : launches)
      if (!isa<DeviceLaunchAttr>(l))
        return emitError() << "launches must be #ffn.device_launch attributes";
  return success();
}

int64_t KernelAbiAttr::numArguments() const {
  // input, params, output, [workspace], [phase, begin, end]
  return 2 + static_cast<int64_t>(getParams().size()) +
         (getWorkspacePerRow() ? 1 : 0) + (getPhaseUnits() ? 3 : 0);
}

int64_t KernelAbiAttr::numExpandedArguments() const {
  // A memref of rank r expands to (allocated, aligned, offset, sizes[r],
  // strides[r]): the input and output are [m, d_model], the workspace [bytes].
  auto expanded = [](int64_t rank) { return 3 + 2 * rank; };
  int64_t n = 2 * expanded(2);
  for (Attribute p : getParams())
    n += expanded(cast<KernelParamAttr>(p).kernelType().getRank());
  if (getWorkspacePerRow())
    n += expanded(1);
  if (getPhaseUnits())
    n += 3;
  return n;
}

KernelAbiAttr KernelAbiAttr::of(Operation *op) {
  return op->getAttrOfType<KernelAbiAttr>(kAttrName);
}

LogicalResult
KernelParamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        StringRef name, DenseI64ArrayAttr shape,
                        MemRefType packed, StringRef pack,
                        StringRef packQuantized, int64_t experts) {
  if (experts < 0)
    return emitError() << "parameter '" << name
                       << "': experts must not be negative, got " << experts;
  ArrayRef<int64_t> logical = shape.asArrayRef();
  if (logical.empty() || logical.size() > 2 ||
      llvm::any_of(logical, [](int64_t d) { return d < 1; }))
    return emitError() << "parameter '" << name
                       << "' must be a vector or a matrix of positive size";
  // The glue passes the packed buffer as a dense row-major memref of
  // static shape and copies unpacked ones byte for byte.
  if (!packed.hasStaticShape() || !packed.getLayout().isIdentity() ||
      packed.getRank() < 1 || packed.getElementTypeBitWidth() % 8 != 0)
    return emitError() << "parameter '" << name
                       << "': packed must be a static, row-major memref of "
                          "whole bytes, got "
                       << packed;
  if (pack.empty() && packed.getShape() != logical)
    return emitError() << "parameter '" << name
                       << "' is not packed, so packed must have its shape";
  if (!packQuantized.empty() && (pack.empty() || logical.size() != 2))
    return emitError() << "parameter '" << name
                       << "': only a packed matrix has pack_quantized";
  return success();
}

int64_t KernelParamAttr::packedBytes() const {
  return getPacked().getNumElements() *
         (getPacked().getElementTypeBitWidth() / 8);
}

MemRefType KernelParamAttr::kernelType() const {
  if (getExperts() == 0)
    return getPacked();
  return MemRefType::get({getExperts() * expertStride()},
                         IntegerType::get(getContext(), 8));
}

LogicalResult MoeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              int64_t experts, int64_t topK, Router,
                              bool normalize, int64_t shared) {
  // The bound keeps every per-row routing table and expert loop small.
  if (experts < 1 || experts > 1024)
    return emitError() << "moe experts must be in [1, 1024], got " << experts;
  if (topK < 1 || topK > experts)
    return emitError() << "moe top_k must be in [1, experts = " << experts
                       << "], got " << topK;
  if (shared < 0 || shared > 1024)
    return emitError() << "moe shared must be in [0, 1024], got " << shared;
  return success();
}

/// A kernel function's signature against its contract: before
/// ffn-kernel-interface (tensors, the output returned) the count; on
/// memrefs each parameter's packed type; in the LLVM dialect (memrefs
/// expanded to their descriptors' fields) the count of fields.
static LogicalResult verifyKernelSignature(FunctionOpInterface func,
                                           KernelAbiAttr abi) {
  ArrayRef<Type> types = func.getArgumentTypes();
  bool expanded = !types.empty() && !isa<ShapedType>(types[0]);
  int64_t expected =
      expanded ? abi.numExpandedArguments()
               : abi.numArguments() - (func.getNumResults() == 1 ? 1 : 0);
  if (static_cast<int64_t>(types.size()) != expected)
    return func.emitError()
           << "kernel contract names " << expected
           << (expanded ? " expanded" : "") << " arguments, the function takes "
           << types.size();
  if (expanded)
    return success();
  for (auto [i, attr] : llvm::enumerate(abi.getParams())) {
    auto param = cast<KernelParamAttr>(attr);
    auto type = dyn_cast<MemRefType>(types[1 + i]);
    MemRefType expected = param.kernelType();
    if (type && (type.getShape() != expected.getShape() ||
                 type.getElementType() != expected.getElementType()))
      return func.emitError() << "parameter '" << param.getName() << "' is "
                              << type << ", its contract says " << expected;
  }
  return success();
}

LogicalResult FfnDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  if (attr.getName() == TargetAttr::kAttrName) {
    if (!isa<TargetAttr>(attr.getValue()))
      return op->emitError() << "'" << TargetAttr::kAttrName
                             << "' must be an #ffn.target";
    if (!isa<ModuleOp>(op))
      return op->emitError() << "'" << TargetAttr::kAttrName
                             << "' belongs on a module";
    return success();
  }
  if (attr.getName() != KernelAbiAttr::kAttrName)
    return success(); // other ffn.* annotations: the passes' own markers
  auto abi = dyn_cast<KernelAbiAttr>(attr.getValue());
  if (!abi)
    return op->emitError() << "'" << KernelAbiAttr::kAttrName
                           << "' must be an #ffn.kernel_abi";
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return op->emitError() << "'" << KernelAbiAttr::kAttrName
                           << "' belongs on a function";
  return verifyKernelSignature(func, abi);
}
