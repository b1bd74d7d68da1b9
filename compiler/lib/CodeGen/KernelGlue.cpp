//===- KernelGlue.cpp - kernel ABI entry points and descriptors -----------===//

#include "KernelGlue.h"

#include "ffn/kernel_abi.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"

using namespace ffnc;

static int64_t abiDType(DType d) {
  switch (d) {
  case DType::F32:
    return FFN_DTYPE_F32;
  case DType::BF16:
    return FFN_DTYPE_BF16;
  case DType::F16:
    return FFN_DTYPE_F16;
  }
  return FFN_DTYPE_F32;
}

static int64_t abiActivation(Activation a) {
  switch (a) {
  case Activation::Relu:
    return FFN_ACT_RELU;
  case Activation::Gelu:
    return FFN_ACT_GELU;
  case Activation::GeluTanh:
    return FFN_ACT_GELU_TANH;
  case Activation::Silu:
    return FFN_ACT_SILU;
  case Activation::Sigmoid:
    return FFN_ACT_SIGMOID;
  case Activation::Identity:
    return FFN_ACT_IDENTITY;
  }
  return FFN_ACT_IDENTITY;
}

static int64_t abiNorm(NormKind n) {
  switch (n) {
  case NormKind::None:
    return FFN_NORM_NONE;
  case NormKind::LayerNorm:
    return FFN_NORM_LAYERNORM;
  case NormKind::RMSNorm:
    return FFN_NORM_RMSNORM;
  }
  return FFN_NORM_NONE;
}

namespace {
class GlueBuilder {
public:
  GlueBuilder(llvm::Module &m)
      : m(m), ctx(m.getContext()), i64(llvm::Type::getInt64Ty(ctx)),
        ptr(llvm::PointerType::getUnqual(ctx)) {}

  llvm::Error add(const FfnSpec &spec, const TargetInfo &target);

private:
  llvm::Constant *i64c(int64_t v) { return llvm::ConstantInt::get(i64, v); }
  llvm::Constant *string(llvm::StringRef s, llvm::StringRef symbol) {
    llvm::Constant *init = llvm::ConstantDataArray::getString(ctx, s);
    auto *g = new llvm::GlobalVariable(m, init->getType(), true,
                                       llvm::GlobalValue::PrivateLinkage, init,
                                       symbol);
    g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    return g;
  }
  llvm::Function *buildEntry(const FfnSpec &spec, llvm::Function *impl,
                             const std::vector<ParamInfo> &params);

  llvm::Module &m;
  llvm::LLVMContext &ctx;
  llvm::IntegerType *i64;
  llvm::PointerType *ptr;
};
} // namespace

llvm::Function *GlueBuilder::buildEntry(const FfnSpec &spec,
                                        llvm::Function *impl,
                                        const std::vector<ParamInfo> &params) {
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                       {i64, ptr, ptr, ptr}, false);
  auto *entry = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                       "ffn_" + spec.name + "_run", m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  llvm::Value *rows = entry->getArg(0);
  llvm::Value *x = entry->getArg(1);
  llvm::Value *paramArray = entry->getArg(2);
  llvm::Value *y = entry->getArg(3);

  // A memref descriptor expands to (allocated, aligned, offset, sizes...,
  // strides...); our buffers are dense and row-major.
  llvm::SmallVector<llvm::Value *> args;
  auto matrix = [&](llvm::Value *p, llvm::Value *r, int64_t cols) {
    args.append({p, p, i64c(0), r, i64c(cols), i64c(cols), i64c(1)});
  };
  matrix(x, rows, spec.dModel);
  for (auto [i, param] : llvm::enumerate(params)) {
    llvm::Value *slot = b.CreateConstInBoundsGEP1_64(ptr, paramArray, i);
    llvm::Value *p = b.CreateLoad(ptr, slot, param.name);
    if (param.rank() == 2)
      matrix(p, i64c(param.rows), param.cols);
    else
      args.append({p, p, i64c(0), i64c(param.rows), i64c(1)});
  }
  matrix(y, rows, spec.dModel);
  b.CreateCall(impl, args);
  b.CreateRetVoid();
  return entry;
}

llvm::Error GlueBuilder::add(const FfnSpec &spec, const TargetInfo &target) {
  llvm::Function *impl = m.getFunction(spec.name);
  if (!impl)
    return llvm::createStringError("internal error: no lowered function '" +
                                   spec.name + "'");
  impl->setName("__ffn_" + spec.name + "_impl");
  impl->setLinkage(llvm::GlobalValue::InternalLinkage);
  std::vector<ParamInfo> params = kernelParams(spec);
  llvm::Function *entry = buildEntry(spec, impl, params);

  // ffn_param_desc[] { name, rank, shape[2] }
  auto *paramType = llvm::StructType::get(ctx, {ptr, i64, i64, i64});
  std::vector<llvm::Constant *> paramDescs;
  for (const ParamInfo &p : params)
    paramDescs.push_back(llvm::ConstantStruct::get(
        paramType, {string(p.name, ".ffn.param"), i64c(p.rank()),
                    i64c(p.rows), i64c(p.cols)}));
  auto *arrayType = llvm::ArrayType::get(paramType, paramDescs.size());
  auto *paramArray = new llvm::GlobalVariable(
      m, arrayType, true, llvm::GlobalValue::PrivateLinkage,
      llvm::ConstantArray::get(arrayType, paramDescs),
      "ffn_" + spec.name + "_params");

  // Field for field, ffn_kernel_desc of kernel_abi.h (all 8-byte fields).
  llvm::Type *f64 = llvm::Type::getDoubleTy(ctx);
  auto *descType = llvm::StructType::get(
      ctx, {i64, i64, ptr, ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64,
            f64, i64, ptr, ptr, ptr, i64, ptr});
  const llvm::DataLayout &layout = m.getDataLayout();
  uint64_t size = layout.getTypeAllocSize(descType);
  if (size != sizeof(ffn_kernel_desc))
    return llvm::createStringError(
        "internal error: kernel descriptor layout mismatch");
  llvm::Constant *fields[] = {
      i64c(FFN_KERNEL_ABI_VERSION),
      i64c(size),
      string(spec.name, ".ffn.name"),
      string(target.name, ".ffn.target"),
      i64c(FFN_DEVICE_CPU),
      i64c(spec.dModel),
      i64c(spec.dFF),
      i64c(abiDType(spec.dtype)),
      i64c(abiActivation(spec.activation)),
      i64c(spec.isGated() ? 1 : 0),
      i64c(spec.residual ? 1 : 0),
      i64c(abiNorm(spec.norm)),
      i64c(spec.normPosition == NormPosition::Post ? FFN_NORM_POST
                                                   : FFN_NORM_PRE),
      llvm::ConstantFP::get(f64, spec.norm == NormKind::None ? 0.0
                                                             : spec.normEps),
      i64c(static_cast<int64_t>(params.size())),
      paramArray,
      entry,
      llvm::ConstantPointerNull::get(ptr),
      i64c(0),
      llvm::ConstantPointerNull::get(ptr)};
  new llvm::GlobalVariable(m, descType, true,
                           llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantStruct::get(descType, fields),
                           "ffn_kernel_" + spec.name);
  return llvm::Error::success();
}

llvm::Error ffnc::addKernelGlue(llvm::Module &module,
                                llvm::ArrayRef<FfnSpec> specs,
                                const TargetInfo &target) {
  GlueBuilder builder(module);
  for (const FfnSpec &spec : specs)
    if (llvm::Error err = builder.add(spec, target))
      return err;
  return llvm::Error::success();
}
