//===- KernelGlue.cpp - LLVM-dialect pieces of every kernel's glue --------===//

#include "ffn/Target/KernelGlue.h"

#include "ffn/kernel_abi.h"

using namespace mlir;
using namespace mlir::ffn;

// The descriptor structs are built as LLVM structs of 8-byte fields; the
// host ABI (x86-64, LP64) must lay the C structs out the same way.
static_assert(sizeof(ffn_kernel_desc) == 33 * 8, "ffn_kernel_desc layout");
static_assert(sizeof(ffn_param_desc) == 6 * 8, "ffn_param_desc layout");

SmallVector<GluedKernel> mlir::ffn::takeKernels(ModuleOp module) {
  SmallVector<GluedKernel> kernels;
  for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
    KernelAbiAttr abi = KernelAbiAttr::of(func);
    if (!abi)
      continue;
    func->removeAttr(KernelAbiAttr::kAttrName);
    kernels.push_back({func.getName().str(), abi, func});
  }
  return kernels;
}

GlueBuilder::GlueBuilder(ModuleOp module)
    : module(module), symbols(module), b(module.getLoc(), module.getContext()),
      i64(IntegerType::get(module.getContext(), 64)),
      ptr(LLVM::LLVMPointerType::get(module.getContext())) {
  b.setInsertionPointToEnd(module.getBody());
}

LogicalResult GlueBuilder::insert(Operation *op, bool exported) {
  StringAttr name = SymbolTable::getSymbolName(op);
  if (exported && symbols.lookup(name)) {
    op->erase();
    return module.emitError("kernel glue: the module already defines '")
           << name.getValue() << "', a name the kernel ABI reserves";
  }
  symbols.insert(op);
  return success();
}

Value GlueBuilder::constant(int64_t value) {
  return LLVM::ConstantOp::create(b, i64, b.getI64IntegerAttr(value));
}

LLVM::LLVMFuncOp GlueBuilder::function(StringRef name, Type result,
                                       ArrayRef<Type> arguments) {
  b.setInsertionPointToEnd(module.getBody());
  auto fn = LLVM::LLVMFuncOp::create(
      b, name, LLVM::LLVMFunctionType::get(result, arguments));
  if (failed(insert(fn, /*exported=*/true)))
    return nullptr;
  b.setInsertionPointToStart(fn.addEntryBlock(b));
  return fn;
}

LLVM::GlobalOp GlueBuilder::global(StringRef name, Type type,
                                   function_ref<Value()> init,
                                   uint64_t alignment, LLVM::Linkage linkage) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto g = LLVM::GlobalOp::create(b, type, /*isConstant=*/true, linkage, name,
                                  Attribute(), alignment);
  if (failed(insert(g, /*exported=*/linkage != LLVM::Linkage::Private)))
    return nullptr;
  b.setInsertionPointToStart(&g.getInitializerRegion().emplaceBlock());
  LLVM::ReturnOp::create(b, init());
  return g;
}

LLVM::GlobalOp GlueBuilder::bytes(StringRef name, StringRef value,
                                  uint64_t alignment) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), value.size());
  auto g = LLVM::GlobalOp::create(b, type, /*isConstant=*/true,
                                  LLVM::Linkage::Private, name,
                                  b.getStringAttr(value), alignment);
  (void)insert(g, /*exported=*/false);
  return g;
}

LLVM::GlobalOp GlueBuilder::string(StringRef name, StringRef value) {
  LLVM::GlobalOp g = bytes(name, (value + Twine('\0')).str(), 0);
  // Only the contents matter: the linker may merge equal strings.
  g.setUnnamedAddr(LLVM::UnnamedAddr::Global);
  return g;
}

Value GlueBuilder::address(Operation *symbol) {
  if (auto fn = dyn_cast<LLVM::LLVMFuncOp>(symbol))
    return LLVM::AddressOfOp::create(b, fn);
  return LLVM::AddressOfOp::create(b, cast<LLVM::GlobalOp>(symbol));
}

Value GlueBuilder::null() { return LLVM::ZeroOp::create(b, ptr); }

Value GlueBuilder::aggregate(Type type, ArrayRef<Value> values) {
  Value result = LLVM::UndefOp::create(b, type);
  for (auto [i, v] : llvm::enumerate(values))
    result = LLVM::InsertValueOp::create(b, result, v,
                                         ArrayRef<int64_t>{int64_t(i)});
  return result;
}

void GlueBuilder::appendMemRef(SmallVectorImpl<Value> &args, Value p,
                               ArrayRef<int64_t> shape, Value rows) {
  args.append({p, p, constant(0)});
  for (int64_t d : shape)
    args.push_back(d < 0 ? rows : constant(d));
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t stride = 1;
    for (size_t j = i + 1; j < shape.size(); ++j)
      stride *= shape[j];
    args.push_back(constant(stride));
  }
}

LLVM::LLVMFuncOp GlueBuilder::buildPack(const GluedKernel &kernel) {
  Type voidType = LLVM::LLVMVoidType::get(b.getContext());
  LLVM::LLVMFuncOp pack =
      function("ffn_" + kernel.name + "_pack", voidType, {i64, ptr, ptr});
  if (!pack)
    return nullptr;
  Block *entry = b.getInsertionBlock();
  Value src = pack.getArgument(1), dst = pack.getArgument(2);
  ArrayRef<Attribute> params = kernel.abi.getParams().getValue();
  SmallVector<Block *> cases;
  SmallVector<APInt> caseValues;
  for (auto [i, attr] : llvm::enumerate(params)) {
    auto param = cast<KernelParamAttr>(attr);
    Block *block = &pack.getBody().emplaceBlock();
    cases.push_back(block);
    caseValues.push_back(APInt(64, i));
    b.setInsertionPointToStart(block);
    if (param.getPack().empty()) {
      LLVM::MemcpyOp::create(b, dst, src, constant(param.packedBytes()),
                             /*isVolatile=*/false);
    } else {
      auto packFn = symbols.lookup<LLVM::LLVMFuncOp>(param.getPack());
      if (!packFn) {
        module.emitError("kernel glue: kernel '")
            << kernel.name << "' has no pack function '" << param.getPack()
            << "'";
        return nullptr;
      }
      // The entry point is the pack function's only caller.
      packFn.setLinkage(LLVM::Linkage::Internal);
      SmallVector<Value> args;
      appendMemRef(args, src, param.getShape().asArrayRef(), nullptr);
      appendMemRef(args, dst, param.getPacked().getShape(), nullptr);
      LLVM::CallOp::create(b, packFn, args);
    }
  }
  finishParamSwitch(pack, entry, cases, caseValues);
  return pack;
}

void GlueBuilder::finishParamSwitch(LLVM::LLVMFuncOp fn, Block *entry,
                                    ArrayRef<Block *> cases,
                                    ArrayRef<APInt> caseValues) {
  Block *done = &fn.getBody().emplaceBlock();
  for (Block *block : cases) {
    b.setInsertionPointToEnd(block);
    LLVM::BrOp::create(b, done);
  }
  b.setInsertionPointToEnd(entry);
  SmallVector<ValueRange> noOperands(cases.size(), ValueRange());
  LLVM::SwitchOp::create(b, fn.getArgument(0), done, ValueRange(), caseValues,
                         cases, noOperands);
  b.setInsertionPointToEnd(done);
  LLVM::ReturnOp::create(b, ValueRange());
}

static int64_t abiDType(Type t) {
  if (t.isBF16())
    return FFN_DTYPE_BF16;
  if (t.isF16())
    return FFN_DTYPE_F16;
  if (t.isInteger(8))
    return FFN_DTYPE_INT8;
  return FFN_DTYPE_F32;
}

static int64_t abiActivation(Activation a) {
  switch (a) {
  case Activation::relu:
    return FFN_ACT_RELU;
  case Activation::gelu:
    return FFN_ACT_GELU;
  case Activation::gelu_tanh:
    return FFN_ACT_GELU_TANH;
  case Activation::silu:
    return FFN_ACT_SILU;
  case Activation::sigmoid:
    return FFN_ACT_SIGMOID;
  case Activation::identity:
    return FFN_ACT_IDENTITY;
  }
  return FFN_ACT_IDENTITY;
}

FailureOr<LLVM::LLVMFuncOp>
GlueBuilder::buildPackQuantized(const GluedKernel &kernel) {
  WeightQuantAttr quant = kernel.abi.getWeightQuant();
  ArrayRef<Attribute> params = kernel.abi.getParams().getValue();
  if (!quant || llvm::none_of(params, [](Attribute a) {
        return !cast<KernelParamAttr>(a).getPackQuantized().empty();
      }))
    return LLVM::LLVMFuncOp();
  Type voidType = LLVM::LLVMVoidType::get(b.getContext());
  LLVM::LLVMFuncOp entry = function("ffn_" + kernel.name + "_pack_quantized",
                                    voidType, {i64, ptr, ptr, ptr, ptr});
  if (!entry)
    return failure();
  Block *start = b.getInsertionBlock();
  Value q = entry.getArgument(1), scales = entry.getArgument(2),
        zeros = entry.getArgument(3), dst = entry.getArgument(4);
  SmallVector<Block *> cases;
  SmallVector<APInt> caseValues;
  for (auto [i, attr] : llvm::enumerate(params)) {
    auto param = cast<KernelParamAttr>(attr);
    if (param.getPackQuantized().empty())
      continue;
    auto packFn = symbols.lookup<LLVM::LLVMFuncOp>(param.getPackQuantized());
    if (!packFn) {
      module.emitError("kernel glue: kernel '")
          << kernel.name << "' has no pack function '"
          << param.getPackQuantized() << "'";
      return failure();
    }
    packFn.setLinkage(LLVM::Linkage::Internal);
    Block *block = &entry.getBody().emplaceBlock();
    cases.push_back(block);
    caseValues.push_back(APInt(64, i));
    b.setInsertionPointToStart(block);
    // The blocks' shapes: [in, out], and [groups, out] for scales and zero
    // points.
    ArrayRef<int64_t> shape = param.getShape().asArrayRef();
    int64_t groups = (shape[0] + quant.getGroup() - 1) / quant.getGroup();
    SmallVector<Value> args;
    appendMemRef(args, q, shape, nullptr);
    appendMemRef(args, scales, {groups, shape[1]}, nullptr);
    if (quant.getZeroPoints())
      appendMemRef(args, zeros, {groups, shape[1]}, nullptr);
    appendMemRef(args, dst, param.getPacked().getShape(), nullptr);
    LLVM::CallOp::create(b, packFn, args);
  }
  finishParamSwitch(entry, start, cases, caseValues);
  return entry;
}

LogicalResult GlueBuilder::buildDescriptor(const GluedKernel &kernel,
                                           StringRef target, int64_t device,
                                           LLVM::LLVMFuncOp pack,
                                           LLVM::GlobalOp cpuCode,
                                           LLVM::GlobalOp cudaCode) {
  MLIRContext *ctx = b.getContext();
  KernelAbiAttr abi = kernel.abi;
  const std::string &name = kernel.name;
  FailureOr<LLVM::LLVMFuncOp> packQuantized;
  {
    OpBuilder::InsertionGuard guard(b);
    packQuantized = buildPackQuantized(kernel);
  }
  if (failed(packQuantized))
    return failure();

  // ffn_param_desc[] { name, rank, shape[2], packed_bytes, experts }
  auto paramType =
      LLVM::LLVMStructType::getLiteral(ctx, {ptr, i64, i64, i64, i64, i64});
  SmallVector<std::pair<LLVM::GlobalOp, KernelParamAttr>> paramNames;
  for (Attribute attr : abi.getParams()) {
    auto param = cast<KernelParamAttr>(attr);
    paramNames.push_back(
        {string("ffn_" + name + "_param_name", param.getName()), param});
  }
  auto paramsType = LLVM::LLVMArrayType::get(paramType, paramNames.size());
  LLVM::GlobalOp params = global("ffn_" + name + "_params", paramsType, [&] {
    SmallVector<Value> descs;
    for (auto [nameString, param] : paramNames) {
      ArrayRef<int64_t> shape = param.getShape().asArrayRef();
      descs.push_back(aggregate(
          paramType,
          {address(nameString), constant(shape.size()), constant(shape[0]),
           constant(shape.size() == 2 ? shape[1] : 0),
           constant(param.packedBytes()), constant(param.getExperts())}));
    }
    return aggregate(paramsType, descs);
  });

  // Everything the packed bytes depend on: the parameters' logical and
  // packed types, their pack functions' kind, the weights' format and who
  // packs them (another back end's packing may fill the same types with
  // other bytes).
  std::string signature;
  {
    llvm::raw_string_ostream os(signature);
    os << abi.getStorage();
    if (WeightQuantAttr quant = abi.getWeightQuant())
      os << ";" << quant;
    os << ";operands " << abi.getOperandType();
    for (Attribute attr : abi.getParams()) {
      auto param = cast<KernelParamAttr>(attr);
      os << ";" << param.getName() << "[";
      llvm::interleave(param.getShape().asArrayRef(), os, "x");
      os << "]";
      if (param.getExperts())
        os << "*" << param.getExperts();
      os << "=" << param.getPacked()
         << (param.getPack().empty() ? "" : ",packed")
         << (param.getPackQuantized().empty() ? "" : ",prequantized");
    }
    if (!abi.getPackLayout().empty())
      os << ";layout " << abi.getPackLayout();
  }
  LLVM::GlobalOp signatureString =
      string("ffn_" + name + "_pack_signature", signature);
  LLVM::GlobalOp nameString = string("ffn_" + name + "_name", name);
  LLVM::GlobalOp targetString = string("ffn_" + name + "_target", target);
  LLVM::GlobalOp strategyString =
      string("ffn_" + name + "_strategy", abi.getStrategy());

  // Field for field, ffn_kernel_desc of kernel_abi.h.
  Type f64 = Float64Type::get(ctx);
  auto descType = LLVM::LLVMStructType::getLiteral(
      ctx, {i64, i64, ptr, ptr, i64, i64, i64, i64, i64, i64, i64,
            i64, i64, i64, f64, i64, i64, i64, i64, i64, i64, i64,
            i64, i64, i64, ptr, ptr, ptr, ptr, i64, ptr, ptr, ptr});
  NormAttr norm = abi.getNorm();
  int64_t normKind = !norm ? FFN_NORM_NONE
                     : norm.getKind() == NormKind::layernorm
                         ? FFN_NORM_LAYERNORM
                         : FFN_NORM_RMSNORM;
  int64_t normPosition = norm && norm.getPosition() == NormPosition::post
                             ? FFN_NORM_POST
                             : FFN_NORM_PRE;
  double eps = norm ? norm.getEps().convertToDouble() : 0.0;
  WeightQuantAttr quant = abi.getWeightQuant();
  int64_t weightQuant = !quant ? FFN_WEIGHTS_DTYPE
                        : quant.getKind() == WeightQuantKind::int8
                            ? FFN_WEIGHTS_INT8
                        : quant.getZeroPoints() ? FFN_WEIGHTS_INT4_ZP
                                                : FFN_WEIGHTS_INT4;
  MoeAttr moe = abi.getMoe();
  // The attribute's verifier keeps moe and groups apart.
  int64_t kind = moe               ? FFN_KIND_MOE
                 : abi.getGroups() ? FFN_KIND_GROUPED
                                   : FFN_KIND_FFN;
  auto init = [&] {
    Value fields[] = {constant(FFN_KERNEL_ABI_VERSION),
                      constant(sizeof(ffn_kernel_desc)),
                      address(nameString),
                      address(targetString),
                      constant(kind),
                      constant(device),
                      constant(abi.getDModel()),
                      constant(abi.getDFf()),
                      constant(abiDType(abi.getStorage())),
                      constant(abiActivation(abi.getActivation())),
                      constant(abi.getGated() ? 1 : 0),
                      constant(abi.getResidual() ? 1 : 0),
                      constant(normKind),
                      constant(normPosition),
                      LLVM::ConstantOp::create(b, f64, b.getF64FloatAttr(eps)),
                      constant(abiDType(abi.getOperandType())),
                      constant(weightQuant),
                      constant(quant ? quant.getGroup() : 0),
                      constant(moe ? moe.getExperts() : 0),
                      constant(moe ? moe.getShared() : 0),
                      constant(moe ? moe.getTopK() : 0),
                      constant(!moe ? 0
                               : moe.getRouter() == Router::softmax_topk
                                   ? FFN_ROUTER_SOFTMAX_TOPK
                                   : FFN_ROUTER_TOPK_SOFTMAX),
                      constant(moe && moe.getNormalize() ? 1 : 0),
                      constant(abi.getGroups()),
                      constant(abi.getParams().size()),
                      address(params),
                      address(pack),
                      *packQuantized ? address(*packQuantized) : null(),
                      address(signatureString),
                      constant(abi.getWorkspacePerRow().value_or(0)),
                      address(strategyString),
                      cpuCode ? address(cpuCode) : null(),
                      cudaCode ? address(cudaCode) : null()};
    return aggregate(descType, fields);
  };
  return success(bool(global("ffn_kernel_" + name, descType, init,
                             /*alignment=*/0, LLVM::Linkage::External)));
}
