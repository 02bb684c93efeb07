// The model readers and the VRAM estimate, against published figures and
// files written here to the formats' specifications (REFERENCE §8 as
// copied into docs/). The real writers (torch.save, onnx) are run by
// tests/cli/models_test.sh.
#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "imgsmith/gate/gate.hpp"
#include "imgsmith/models/model_file.hpp"
#include "imgsmith/models/vram.hpp"
#include "imgsmith/util/error.hpp"
#include "model_readers.hpp"

using namespace imgsmith;
using nlohmann::json;

namespace {

std::string le(std::uint64_t v, std::size_t bytes) {
  std::string out;
  for (std::size_t i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}

struct Tensor {
  std::string name;
  std::vector<std::uint64_t> shape;
};

// A safetensors header for `tensors` in `dtype` (2 bytes per element), and
// the size the whole file would have; the data itself is never written,
// since the reader never reads it.
std::pair<std::string, std::uint64_t> safetensors_header(const std::vector<Tensor>& tensors,
                                                         const std::string& dtype = "BF16",
                                                         unsigned element_bytes = 2) {
  json header = json::object();
  std::uint64_t offset = 0;
  for (const auto& t : tensors) {
    std::uint64_t n = 1;
    for (auto d : t.shape) n *= d;
    header[t.name] = {{"dtype", dtype},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + n * element_bytes}}};
    offset += n * element_bytes;
  }
  header["__metadata__"] = {{"format", "pt"}};
  std::string text = header.dump();
  while (text.size() % 8 != 0) text.push_back(' ');  // the spec allows trailing spaces
  return {le(text.size(), 8) + text, 8 + text.size() + offset};
}

// The tensors of a Llama-2-7B-shaped checkpoint, from its public config:
// vocab 32000, hidden 4096, intermediate 11008, 32 layers, 32 heads.
std::vector<Tensor> llama_7b() {
  std::vector<Tensor> t{{"model.embed_tokens.weight", {32000, 4096}}};
  for (int i = 0; i < 32; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "o_proj"})
      t.push_back({p + "self_attn." + proj + ".weight", {4096, 4096}});
    t.push_back({p + "mlp.gate_proj.weight", {11008, 4096}});
    t.push_back({p + "mlp.up_proj.weight", {11008, 4096}});
    t.push_back({p + "mlp.down_proj.weight", {4096, 11008}});
    t.push_back({p + "input_layernorm.weight", {4096}});
    t.push_back({p + "post_attention_layernorm.weight", {4096}});
  }
  t.push_back({"model.norm.weight", {4096}});
  t.push_back({"lm_head.weight", {32000, 4096}});
  return t;
}

const char* kLlamaConfig = R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
  "intermediate_size": 11008, "max_position_embeddings": 4096, "num_attention_heads": 32,
  "num_hidden_layers": 32, "num_key_value_heads": 32, "torch_dtype": "float16", "vocab_size": 32000})";

ModelFile read_text(const std::string& bytes, std::uint64_t size) {
  StringReader reader(bytes);
  return read_model_file(sniff_model_format(bytes.substr(0, 4096)), reader, size);
}

// GGUF v3, written to ggml's docs/gguf.md.
class GgufWriter {
 public:
  void string_kv(const std::string& key, const std::string& value) {
    kv_ += str(key) + le(8, 4) + str(value);
    ++kvs_;
  }
  void u32_kv(const std::string& key, std::uint32_t value) {
    kv_ += str(key) + le(4, 4) + le(value, 4);
    ++kvs_;
  }
  void string_array_kv(const std::string& key, const std::vector<std::string>& values) {
    kv_ += str(key) + le(9, 4) + le(8, 4) + le(values.size(), 8);
    for (const auto& v : values) kv_ += str(v);
    ++kvs_;
  }
  void f32_array_kv(const std::string& key, std::size_t n) {
    kv_ += str(key) + le(9, 4) + le(6, 4) + le(n, 8) + std::string(n * 4, '\0');
    ++kvs_;
  }
  void tensor(const std::string& name, const std::vector<std::uint64_t>& dims, std::uint32_t type,
              std::uint64_t bytes) {
    infos_ += str(name) + le(dims.size(), 4);
    for (auto d : dims) infos_ += le(d, 8);
    infos_ += le(type, 4) + le(data_, 8);
    data_ += (bytes + 31) / 32 * 32;
    ++tensors_;
  }
  // The header, and the size of the whole file (aligned data after it).
  std::pair<std::string, std::uint64_t> file() const {
    std::string out = "GGUF" + le(3, 4) + le(tensors_, 8) + le(kvs_, 8) + kv_ + infos_;
    const std::uint64_t start = (out.size() + 31) / 32 * 32;
    return {out, start + data_};
  }

 private:
  static std::string str(const std::string& s) { return le(s.size(), 8) + s; }
  std::string kv_, infos_;
  std::uint64_t kvs_ = 0, tensors_ = 0, data_ = 0;
};

// torch.save's zip around `pickle`, with one 64-byte storage "0".
std::string torch_zip(const std::string& pickle) {
  const std::string storage(64, '\0');
  std::string zip, directory;
  std::uint64_t entries = 0;
  for (const auto& [name, data] :
       {std::pair<std::string, std::string>{"m/data.pkl", pickle}, {"m/data/0", storage}}) {
    const std::string sizes = le(0, 4) + le(data.size(), 4) + le(data.size(), 4);
    directory += std::string("PK\x01\x02", 4) + le(20, 2) + le(20, 2) + le(0, 2) + le(0, 2) +
                 le(0, 4) + sizes + le(name.size(), 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 2) +
                 le(0, 4) + le(zip.size(), 4) + name;
    zip += std::string("PK\x03\x04", 4) + le(20, 2) + le(0, 2) + le(0, 2) + le(0, 4) + sizes +
           le(name.size(), 2) + le(0, 2) + name + data;
    ++entries;
  }
  const std::uint64_t directory_at = zip.size();
  return zip + directory + std::string("PK\x05\x06", 4) + le(0, 4) + le(entries, 2) +
         le(entries, 2) + le(directory.size(), 4) + le(directory_at, 4) + le(0, 2);
}

}  // namespace

TEST_CASE("a Llama-2-7B-shaped safetensors header gives the published parameter count") {
  const auto [header, size] = safetensors_header(llama_7b());
  const ModelFile f = read_text(header, size);
  CHECK(f.warnings.empty());
  CHECK(f.format == ModelFormat::Safetensors);
  CHECK(f.tensors == 291);
  CHECK(f.parameters == 6'738'415'616);  // REFERENCE §8
  CHECK(f.weight_bytes == 13'476'831'232);
  CHECK(f.dtype_parameters.at("BF16") == f.parameters);

  const std::vector<Model> models = collect_models({{"/models/llama/model.safetensors", f}},
                                                   {{"/models/llama/config.json", kLlamaConfig}});
  REQUIRE(models.size() == 1);
  CHECK(models[0].shape_from == "config.json");
  const VramEstimate v = estimate_vram(models[0], {});
  CHECK(v.kv_bytes_per_token == 524'288);  // 2 x 32 x 32 x 128 x 2 = 512 KiB
  CHECK(v.context == 4096);
  const PrecisionNeed* bf16 = v.at(Precision::Bf16);
  REQUIRE(bf16 != nullptr);
  CHECK(bf16->weights == 13'476'831'232);      // 13.48 GB
  CHECK(bf16->kv_cache == 524'288ull * 4096);  // 2 GiB at 4,096 tokens
  const PrecisionNeed* int4 = v.at(Precision::Int4);
  REQUIRE(int4 != nullptr);
  // The embeddings, LM head (32,000 x 4,096 each) and 65 norms stay at 16
  // bits; the rest takes half a byte and 2.5 bytes per group of 128.
  const std::uint64_t kept = 2 * 32'000ull * 4096 + 65 * 4096;
  CHECK(models[0].kept_16bit == kept);
  const std::uint64_t quantized = 6'738'415'616 - kept;
  CHECK(int4->weights == kept * 2 + quantized / 2 + quantized / 128 * 5 / 2);
  // An AutoGPTQ Llama-2-7b-hf at 4 bits, group 128 (TinyLamda/
  // llama-2-7b-4bit-128g on the Hugging Face hub) lists its
  // gptq_model-4bit-128g.safetensors as 3.89 GB: within 1%, where every
  // parameter at 4 bits said 3.50 GB.
  CHECK(std::abs(static_cast<double>(int4->weights) / 3.89e9 - 1) < 0.01);
  // At bf16 with 4,096 tokens vLLM needs ~16.3 GB, within 0.9 of an L4 (24
  // GB), not of a T4 (16 GB).
  CHECK(bf16->fits_on.front() == "L4");
  CHECK(std::find(bf16->fits_on.begin(), bf16->fits_on.end(), "T4") == bf16->fits_on.end());
}

TEST_CASE("sharded safetensors add up to one model, with the context a flag sets") {
  auto tensors = llama_7b();
  const std::vector<Tensor> first(tensors.begin(), tensors.begin() + 150);
  const std::vector<Tensor> second(tensors.begin() + 150, tensors.end());
  const auto [h1, s1] = safetensors_header(first);
  const auto [h2, s2] = safetensors_header(second);
  const std::vector<Model> models =
      collect_models({{"/m/model-00002-of-00002.safetensors", read_text(h2, s2)},
                      {"/m/model-00001-of-00002.safetensors", read_text(h1, s1)}},
                     {{"/m/config.json", kLlamaConfig}});
  REQUIRE(models.size() == 1);
  CHECK(models[0].path == "/m/");
  CHECK(models[0].files.size() == 2);
  CHECK(models[0].files[0] == "/m/model-00001-of-00002.safetensors");
  CHECK(models[0].parameters == 6'738'415'616);
  const VramEstimate v = estimate_vram(models[0], {1000, 4});
  CHECK(v.context == 1000);
  CHECK(v.at(Precision::Bf16)->kv_cache == 524'288ull * 1000 * 4);
  // A safetensors checkpoint is vLLM's to serve. Two GPUs split the
  // weights and KV cache; the sampler's 256 x 32,000 logits at 41 bytes
  // each outweigh the forward of 2,048 tokens through half the MLP
  // (2,048 x (3 x 11,008 / 2 + 3 x 4,096) x 2 B = 118 MB), and each GPU
  // holds 3.58 GiB of non-torch memory (NCCL): data/vram.json.
  CHECK(v.engine == Engine::Vllm);
  const PrecisionNeed& n = *v.at(Precision::Bf16);
  const std::uint64_t sampler = 256ull * 32'000 * 41;
  const std::uint64_t non_torch_tp = static_cast<std::uint64_t>(3.58 * (1ull << 30));
  CHECK(v.per_gpu(n, 2) == (n.weights + 1) / 2 + (n.kv_cache + 1) / 2 + sampler + non_torch_tp);
  // One GPU: the same sampler, and 0.35 GiB of non-torch memory.
  CHECK(n.activations == sampler);
  CHECK(n.cuda_context == static_cast<std::uint64_t>(0.35 * (1ull << 30)));
}

TEST_CASE(
    "a Hugging Face cache: one model a snapshot, by its names, with its config through the link") {
  auto tensors = llama_7b();
  const std::vector<Tensor> first(tensors.begin(), tensors.begin() + 150);
  const std::vector<Tensor> second(tensors.begin() + 150, tensors.end());
  const auto [h1, s1] = safetensors_header(first);
  const auto [h2, s2] = safetensors_header(second);
  const std::string cache = "/root/.cache/huggingface/hub/models--meta-llama--Llama-2-7b-hf";
  const auto blob = [&](const char* sha) { return cache + "/blobs/" + sha; };
  const auto in = [&](const char* rev, const char* name) {
    return cache + "/snapshots/" + rev + "/" + name;
  };
  const std::vector<ModelFileAt> files = {{blob("aa01"), read_text(h1, s1)},
                                          {blob("aa02"), read_text(h2, s2)},
                                          {blob("bb01"), read_text(h1, s1)}};
  std::vector<LinkAt> links = {{in("r1", "model-00001-of-00002.safetensors"), "../../blobs/aa01"},
                               {in("r1", "model-00002-of-00002.safetensors"), "../../blobs/aa02"},
                               {in("r1", "config.json"), "../../blobs/cc01"},
                               // Another revision whose only shard is an absolute link.
                               {in("r0", "model.safetensors"), blob("bb01")}};
  std::vector<TextFileAt> texts = {{blob("cc01"), kLlamaConfig},
                                   {cache + "/refs/main", "r1\n"},
                                   {"/app/config.json", "{\"port\": 8080}"}};

  SECTION("refs/main names the revision that counts; the other is a warning") {
    const std::vector<Model> models = collect_models(resolve_hf_caches(files, texts, links));
    REQUIRE(models.size() == 1);
    CHECK(models[0].path == in("r1", ""));
    CHECK(models[0].files.size() == 2);
    CHECK(models[0].parameters == 6'738'415'616);
    CHECK(models[0].shape_from == "config.json");
    CHECK(models[0].shape.layers == 32);
    REQUIRE(models[0].warnings.size() == 1);
    CHECK(models[0].warnings[0].find("other revisions than main's (r1): r0") != std::string::npos);
  }
  SECTION("without refs/main every snapshot is a checkpoint of its own") {
    texts.erase(texts.begin() + 1);
    const std::vector<Model> models = collect_models(resolve_hf_caches(files, texts, links));
    REQUIRE(models.size() == 2);
    CHECK(models[0].path == in("r1", ""));
    CHECK(models[1].path == in("r0", "model.safetensors"));
    CHECK(models[1].shape_from.empty());  // r0 has no config.json
  }
  SECTION("refs/main naming a snapshot the image lacks counts them all") {
    texts[1].text = "r9";
    CHECK(collect_models(resolve_hf_caches(files, texts, links)).size() == 2);
  }
  SECTION("a blob no snapshot names is no model, and files outside caches pass through") {
    links.clear();
    std::vector<ModelFileAt> with_plain = files;
    with_plain.push_back({"/models/plain.safetensors", read_text(h1, s1)});
    const ModelInputs inputs = resolve_hf_caches(with_plain, texts, links);
    REQUIRE(inputs.files.size() == 1);
    CHECK(inputs.files[0].path == "/models/plain.safetensors");
    REQUIRE(inputs.configs.size() == 1);
    CHECK(inputs.configs[0].path == "/app/config.json");
  }
  SECTION("which links and small files a scan keeps") {
    CHECK(hf_cache_link(in("r1", "config.json").substr(1)));
    CHECK_FALSE(hf_cache_link(cache.substr(1) + "/refs/main"));
    CHECK_FALSE(hf_cache_link("usr/lib/models--x.so"));
    CHECK(hf_cache_text(blob("cc01").substr(1), 700));
    CHECK_FALSE(hf_cache_text(blob("aa01").substr(1), kHfCacheTextBytes + 1));
    CHECK_FALSE(hf_cache_text("srv/blobs/x", 10));
  }
}

TEST_CASE("a safetensors header that lies is reported, not trusted") {
  SECTION("a tensor past the end of the file") {
    auto [header, size] = safetensors_header({{"b", {16}}, {"a", {1024, 1024}}});
    const ModelFile f = read_text(header, size - 100);
    REQUIRE(f.warnings.size() == 1);
    CHECK(f.warnings[0].find("'a' points past the end") != std::string::npos);
    CHECK(f.parameters == 16);  // b alone
  }
  SECTION("a length larger than the file") {
    const std::string bytes = le(1'000'000, 8) + "{\"a\":{}}";
    const ModelFile f = read_text(bytes, bytes.size());
    REQUIRE_FALSE(f.warnings.empty());
    CHECK(f.warnings.back().find("larger than the file") != std::string::npos);
    CHECK_FALSE(f.parameters_known);
    // Its parameters unknown, its size stands for its weights: a gate on
    // the stored size still sees the file.
    CHECK(f.weight_bytes == bytes.size());
  }
  SECTION("a byte count that does not match the shape") {
    json header = {{"w", {{"dtype", "F32"}, {"shape", {10, 10}}, {"data_offsets", {0, 300}}}}};
    const std::string text = header.dump();
    const ModelFile f = read_text(le(text.size(), 8) + text, 8 + text.size() + 300);
    REQUIRE(f.warnings.size() == 1);
    CHECK(f.warnings[0].find("claims 300 bytes for 100 F32 elements") != std::string::npos);
    CHECK(f.tensors == 0);
  }
  SECTION("overlapping tensors") {
    json header = {{"a", {{"dtype", "F16"}, {"shape", {8}}, {"data_offsets", {0, 16}}}},
                   {"b", {{"dtype", "F16"}, {"shape", {8}}, {"data_offsets", {8, 24}}}}};
    const std::string text = header.dump();
    const ModelFile f = read_text(le(text.size(), 8) + text, 8 + text.size() + 24);
    REQUIRE(f.warnings.size() == 1);
    CHECK(f.warnings[0].find("overlap") != std::string::npos);
  }
  SECTION("entries of the wrong shape, beside a good one") {
    const std::string text =
        R"({"__metadata__": {"format": "pt", "nested": {"a": [1]}}, "s": "not a tensor", "arr": [1, 2],)"
        R"( "neg": {"dtype": "F16", "shape": [-4], "data_offsets": [0, 8]},)"
        R"( "three": {"dtype": "F16", "shape": [4], "data_offsets": [0, 8, 9]},)"
        R"( "deep": {"dtype": "F16", "shape": [[4]], "data_offsets": [0, 8]},)"
        R"( "extra": {"dtype": "F16", "shape": [4], "data_offsets": [8, 16], "note": {"x": [1]}}})";
    const ModelFile f = read_text(le(text.size(), 8) + text, 8 + text.size() + 16);
    REQUIRE(f.warnings.size() == 1);
    for (const char* bad : {"'s' has no dtype", "'arr' has no dtype", "'neg' has no dtype",
                            "'three' has no dtype", "'deep' has no dtype"})
      CHECK(f.warnings[0].find(bad) != std::string::npos);
    CHECK(f.warnings[0].find("more") == std::string::npos);  // five lies, all listed
    CHECK(f.tensors == 1);  // "extra": an unknown field does not spoil it
    CHECK(f.parameters == 4);
  }
  SECTION("a header that is not an object") {
    const std::string text = "[1, 2, 3]";
    const std::string bytes = le(text.size(), 8) + text;
    StringReader reader(bytes);
    const ModelFile f = read_model_file(ModelFormat::Safetensors, reader, bytes.size());
    REQUIRE_FALSE(f.warnings.empty());
    CHECK(f.warnings.back().find("not a JSON object") != std::string::npos);
  }
  SECTION("a truncated header") {
    const auto [header, size] = safetensors_header({{"a", {4}}});
    const ModelFile f = read_text(header.substr(0, header.size() / 2), size);
    REQUIRE_FALSE(f.warnings.empty());
    CHECK(f.warnings.back().find("ends inside the JSON header") != std::string::npos);
    CHECK_FALSE(f.parameters_known);
  }
}

TEST_CASE("a GGUF file: metadata, quantized tensors and the KV cache of grouped-query attention") {
  GgufWriter w;
  w.string_kv("general.architecture", "llama");
  w.u32_kv("llama.block_count", 2);
  w.u32_kv("llama.context_length", 2048);
  w.u32_kv("llama.embedding_length", 256);
  w.u32_kv("llama.attention.head_count", 8);
  w.u32_kv("llama.attention.head_count_kv", 2);
  w.string_array_kv("tokenizer.ggml.tokens", {"<s>", "</s>", "hello", "world"});
  w.f32_array_kv("tokenizer.ggml.scores", 4);
  w.tensor("token_embd.weight", {256, 4}, 12, 256 * 4 / 256 * 144);     // Q4_K
  w.tensor("blk.0.attn_q.weight", {256, 256}, 8, 256 * 256 / 32 * 34);  // Q8_0
  w.tensor("blk.0.attn_norm.weight", {256}, 0, 256 * 4);                // F32
  const auto [bytes, size] = w.file();
  const ModelFile f = read_text(bytes, size);
  CHECK(f.warnings.empty());
  CHECK(f.format == ModelFormat::Gguf);
  CHECK(f.tensors == 3);
  CHECK(f.parameters == 1024 + 65536 + 256);
  CHECK(f.weight_bytes == 576 + 69632 + 1024);
  CHECK(f.dtype_parameters.at("Q8_0") == 65536);
  CHECK(f.shape.architecture == "llama");
  CHECK(f.shape.layers == 2);
  CHECK(f.shape.kv_heads == 2);
  CHECK(f.shape.key_dim == 32);  // 256 / 8
  const std::vector<Model> models = collect_models({{"/m/tiny.gguf", f}}, {});
  REQUIRE(models.size() == 1);
  CHECK(models[0].quantization == "Q8_0");
  const VramEstimate v = estimate_vram(models[0], {});
  CHECK(v.kv_bytes_per_token == 2 * 2 * 2 * 32 * 2);
  CHECK(v.context == 2048);
  CHECK(v.at(Precision::Stored)->weights == f.weight_bytes);
  // The vocabulary is the token list's length; llama.cpp serves GGUF.
  CHECK(f.shape.vocab_size == 4);
  CHECK(v.engine == Engine::LlamaCpp);
}

// Gemma-2-9B's GGUF (42 blocks, 16 heads, 8 KV heads, head dim 256, 8,192
// tokens, window 4,096: convert_hf_to_gguf.py writes
// gemma2.attention.sliding_window) and Gemma-3's (five layers in six
// slide). The GGUF says the window, the architecture which layers: as
// llama.cpp's SWA cache keeps them.
TEST_CASE("a GGUF file's sliding window: its architecture says which layers slide") {
  const auto gguf = [](const std::string& arch, std::uint32_t blocks, std::uint32_t window) {
    GgufWriter w;
    w.string_kv("general.architecture", arch);
    w.u32_kv(arch + ".block_count", blocks);
    w.u32_kv(arch + ".context_length", 8192);
    w.u32_kv(arch + ".embedding_length", 3584);
    w.u32_kv(arch + ".attention.head_count", 16);
    w.u32_kv(arch + ".attention.head_count_kv", 8);
    w.u32_kv(arch + ".attention.key_length", 256);
    w.u32_kv(arch + ".attention.value_length", 256);
    if (window > 0) w.u32_kv(arch + ".attention.sliding_window", window);
    w.tensor("blk.0.attn_norm.weight", {3584}, 0, 3584 * 4);
    const auto [bytes, size] = w.file();
    return collect_models({{"/m/" + arch + ".gguf", read_text(bytes, size)}}, {});
  };
  const std::uint64_t per_layer_token = 2 * 8 * 256 * 2;
  SECTION("gemma2: alternate layers keep 4,096 of the 8,192 tokens") {
    const auto models = gguf("gemma2", 42, 4096);
    REQUIRE(models.size() == 1);
    CHECK(models[0].shape.sliding_layers == 21);
    CHECK(estimate_vram(models[0], {}).kv_cache_bytes ==
          (21ull * 8192 + 21ull * 4096) * per_layer_token);
  }
  SECTION("gemma3: five in six of 62 layers keep 1,024") {
    const auto models = gguf("gemma3", 62, 1024);
    REQUIRE(models.size() == 1);
    CHECK(models[0].shape.sliding_layers == 52);
    CHECK(estimate_vram(models[0], {}).kv_cache_bytes ==
          (10ull * 8192 + 52ull * 1024) * per_layer_token);
  }
  SECTION("an architecture without a rule keeps every layer whole") {
    const auto models = gguf("llama", 32, 4096);
    REQUIRE(models.size() == 1);
    CHECK(models[0].shape.sliding_layers == 0);
    CHECK(models[0].shape.sliding_window == 0);
    CHECK(estimate_vram(models[0], {}).kv_cache_bytes == 32ull * 8192 * per_layer_token);
  }
}

TEST_CASE("a GGUF file that lies or ends early is a warning, never a crash") {
  SECTION("absurd counts") {
    const std::string bytes = "GGUF" + le(3, 4) + le(1ull << 40, 8) + le(0, 8);
    const ModelFile f = read_text(bytes, bytes.size());
    REQUIRE_FALSE(f.warnings.empty());
    CHECK_FALSE(f.parameters_known);
  }
  SECTION("a tensor past the end") {
    GgufWriter w;
    w.tensor("big", {1024, 1024}, 0, 4 << 20);
    const auto [bytes, size] = w.file();
    const ModelFile f = read_text(bytes, size - 1);
    REQUIRE(f.warnings.size() == 1);
    CHECK(f.warnings[0].find("'big' points past the end") != std::string::npos);
    CHECK(f.tensors == 0);
  }
  SECTION("every truncation of a valid file") {
    GgufWriter w;
    w.string_kv("general.architecture", "llama");
    w.string_array_kv("tokenizer.ggml.tokens", {"a", "b"});
    w.tensor("t", {32}, 8, 34);
    const auto [bytes, size] = w.file();
    for (std::size_t cut = 4; cut < bytes.size(); ++cut) {
      const ModelFile f = read_text(bytes.substr(0, cut), size);
      CHECK_FALSE(f.warnings.empty());
    }
  }
}

TEST_CASE("a pickle that would run code is parsed, never run") {
  // torch.save's zip layout with a data.pkl that calls os.system: the reader
  // must neither run it nor count parameters from it.
  const std::string command = "touch /tmp/imgsmith-pickle-ran";
  const std::string pickle =
      std::string("\x80\x02") + "cos\nsystem\n" + "X" + le(command.size(), 4) + command + "\x85R.";
  const std::string zip = torch_zip(pickle);
  const ModelFile f = read_text(zip, zip.size());
  CHECK(f.format == ModelFormat::PyTorch);
  CHECK_FALSE(f.parameters_known);
  CHECK(f.weight_bytes == 64);
  REQUIRE(f.warnings.size() == 1);
  CHECK(f.warnings[0].find("does not name a type") != std::string::npos);
}

TEST_CASE("pickle bombs: doubling tuples, deep nesting, long marks and huge integers stay small") {
  SECTION("a tuple of itself, doubled 60 times") {
    std::string p =
        "\x80\x02"
        "N"
        "q\x00";
    for (int i = 0; i < 60; ++i) p += "h\x00h\x00\x86q\x00";
    p += "0.";
    const std::string zip = torch_zip(p);
    const ModelFile f = read_text(zip, zip.size());
    CHECK(f.weight_bytes ==
          64);  // reached quickly and within memory: the pickle built nothing large
  }
  SECTION("100,000 nested tuples") {
    std::string p = "\x80\x02N" + std::string(100000, '\x85') + "0.";
    const std::string zip = torch_zip(p);
    const ModelFile f = read_text(zip, zip.size());
    CHECK(f.weight_bytes == 64);
    CHECK_FALSE(f.parameters_known);
  }
  SECTION("a mark before a million values, and a 40-digit INT") {
    std::string p = "\x80\x02(" + std::string(1000000, 'N') + "tI" + std::string(40, '9') + "\n0.";
    const std::string zip = torch_zip(p);
    const ModelFile f = read_text(zip, zip.size());
    CHECK(f.weight_bytes == 64);
  }
}

// Published configs, as their config.json files on the Hugging Face Hub
// have them (keys that do not bear on the shape left out); the expected
// shapes are transformers' class defaults and the papers' cache formulas.
TEST_CASE("config.json completed with its model_type's defaults, MLA, encoders and unknown types") {
  SECTION("Llava-1.5-7B: text_config names only what differs from LlamaConfig") {
    const auto c = read_hf_config(R"({"architectures": ["LlavaForConditionalGeneration"],
      "model_type": "llava", "torch_dtype": "float16",
      "text_config": {"_name_or_path": "lmsys/vicuna-7b-v1.5", "architectures": ["LlamaForCausalLM"],
        "max_position_embeddings": 4096, "model_type": "llama", "rms_norm_eps": 1e-05,
        "torch_dtype": "float16", "vocab_size": 32064},
      "vision_config": {"hidden_size": 1024, "image_size": 336, "model_type": "clip_vision_model",
        "num_hidden_layers": 24, "num_attention_heads": 16}})");
    REQUIRE(c);
    CHECK(c->model_type == "llama");
    CHECK(c->shape.layers == 32);  // LlamaConfig's defaults, not the vision tower's 24
    CHECK(c->shape.attention_heads == 32);
    CHECK(c->shape.kv_heads == 32);
    CHECK(c->shape.key_dim == 128);
    CHECK(c->shape.context_length == 4096);  // the one it names
    CHECK(c->defaulted.find("layers") != std::string::npos);
    // K and V, 32 layers x 32 heads x 128 x 2 bytes: 524,288 bytes a token.
    CHECK(c->shape.layers * c->shape.kv_heads * (c->shape.key_dim + c->shape.value_dim) * 2 ==
          524'288);
  }
  SECTION("DeepSeek-V2-Lite: multi-head latent attention caches 576 values a layer") {
    const auto c = read_hf_config(R"({"architectures": ["DeepseekV2ForCausalLM"],
      "model_type": "deepseek_v2", "hidden_size": 2048, "num_hidden_layers": 27,
      "num_attention_heads": 16, "num_key_value_heads": 16, "kv_lora_rank": 512,
      "q_lora_rank": null, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
      "max_position_embeddings": 163840, "torch_dtype": "bfloat16"})");
    REQUIRE(c);
    // (kv_lora_rank + qk_rope_head_dim) x layers x 2 bytes = 31,104 a token
    // (DeepSeek-V2 paper, section 2.1.2), not layers x 16 heads x 2 x 128.
    CHECK(c->shape.layers * c->shape.kv_heads * (c->shape.key_dim + c->shape.value_dim) * 2 ==
          31'104);
    CHECK(c->attention_note ==
          "multi-head latent attention: a latent of 512 and a rotary key of 64 cached a layer");
  }
  SECTION("BERT: an encoder keeps no KV cache") {
    const auto c = read_hf_config(R"({"architectures": ["BertForMaskedLM"], "model_type": "bert",
      "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
      "max_position_embeddings": 512})");
    REQUIRE(c);
    CHECK(c->encoder_only);
    CHECK_FALSE(c->shape.has_kv_cache());
    // A model with those weights says why it has no KV cache.
    const auto [header, size] =
        safetensors_header({{"bert.embeddings.word_embeddings.weight", {30522, 768}}});
    const std::vector<Model> models =
        collect_models({{"/m/model.safetensors", read_text(header, size)}},
                       {{"/m/config.json", R"({"model_type": "bert",
      "architectures": ["BertForMaskedLM"], "hidden_size": 768})"}});
    REQUIRE(models.size() == 1);
    CHECK(models[0].shape_from ==
          "config.json + bert defaults for layers, heads, positions; an encoder: no KV cache");
    CHECK(estimate_vram(models[0], {}).kv_bytes_per_token == 0);
  }
  SECTION("a model_type imgsmith has no defaults for is said, never read as 0") {
    const auto c = read_hf_config(R"({"architectures": ["FrobForCausalLM"],
      "model_type": "frobnicator", "hidden_size": 1024})");
    REQUIRE(c);
    CHECK_FALSE(c->shape.has_kv_cache());
    REQUIRE(c->warnings.size() == 1);
    CHECK(c->warnings[0].find("model_type 'frobnicator' is not in imgsmith's table") !=
          std::string::npos);
  }
  SECTION("a complete config of a known type takes nothing from the defaults") {
    const auto c = read_hf_config(kLlamaConfig);
    REQUIRE(c);
    CHECK(c->defaulted.empty());
    CHECK(c->warnings.empty());
  }
}

// The KV cache of one sequence at `context` tokens, from a config.json.
static std::uint64_t kv_cache_at(const char* config, std::uint64_t context) {
  const auto c = read_hf_config(config);
  REQUIRE(c);
  Model m;
  m.shape = c->shape;
  return estimate_vram(m, {context, 1}).kv_cache_bytes;
}

// The published config.json fields of each model that bear on its KV
// cache; the expected figures are the windows' arithmetic.
TEST_CASE("sliding windows: layers that slide keep only their window of the KV cache") {
  SECTION("Mistral-7B-v0.1: every layer keeps 4,096 tokens of 32,768") {
    const char* config = R"({"architectures": ["MistralForCausalLM"], "model_type": "mistral",
      "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": 8, "max_position_embeddings": 32768, "sliding_window": 4096})";
    // 32 layers x 4,096 tokens x (8 KV heads x 2 x 128 x 2 bytes): 512 MiB,
    // not the 4 GiB of the whole context.
    CHECK(kv_cache_at(config, 32768) == 32ull * 4096 * 4096);
    CHECK(kv_cache_at(config, 1000) == 32ull * 1000 * 4096);  // within the window
  }
  SECTION("Mistral-7B-Instruct-v0.2: sliding_window null, every layer keeps the context") {
    CHECK(kv_cache_at(R"({"model_type": "mistral", "hidden_size": 4096, "num_hidden_layers": 32,
      "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 32768,
      "sliding_window": null})",
                      32768) == 32ull * 32768 * 4096);
  }
  SECTION("Gemma-2-9B: 21 of 42 layers slide over 4,096 of 8,192") {
    const auto c = read_hf_config(R"({"model_type": "gemma2", "hidden_size": 3584,
      "num_hidden_layers": 42, "num_attention_heads": 16, "num_key_value_heads": 8,
      "head_dim": 256, "max_position_embeddings": 8192, "sliding_window": 4096})");
    REQUIRE(c);
    CHECK(c->shape.sliding_layers == 21);
    Model m;
    m.shape = c->shape;
    const std::uint64_t per_layer_token = 8 * 2 * 256 * 2;
    CHECK(estimate_vram(m, {}).kv_cache_bytes == (21ull * 8192 + 21ull * 4096) * per_layer_token);
  }
  SECTION("Gemma-3-27B: five in six of 62 text layers slide over 1,024") {
    const char* config = R"({"architectures": ["Gemma3ForConditionalGeneration"],
      "model_type": "gemma3", "text_config": {"model_type": "gemma3_text", "head_dim": 128,
      "hidden_size": 5376, "num_attention_heads": 32, "num_hidden_layers": 62,
      "num_key_value_heads": 16, "sliding_window": 1024}})";
    // 10 global layers keep the 131,072 tokens (gemma3_text's default
    // maximum), 52 keep 1,024.
    CHECK(kv_cache_at(config, 131072) == (10ull * 131072 + 52ull * 1024) * 16 * 2 * 128 * 2);
  }
  SECTION("layer_types, where config.json lists them, say which layers slide") {
    const auto c = read_hf_config(R"({"model_type": "mistral", "hidden_size": 512,
      "num_hidden_layers": 4, "num_attention_heads": 8, "sliding_window": 128,
      "layer_types": ["sliding_attention", "full_attention", "full_attention",
                      "sliding_attention"]})");
    REQUIRE(c);
    CHECK(c->shape.sliding_layers == 2);
  }
  SECTION("Qwen2.5-7B: a sliding_window with use_sliding_window false slides nothing") {
    const auto c = read_hf_config(R"({"model_type": "qwen2", "hidden_size": 3584,
      "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
      "max_position_embeddings": 32768, "sliding_window": 131072, "use_sliding_window": false,
      "max_window_layers": 28})");
    REQUIRE(c);
    CHECK(c->shape.sliding_layers == 0);
    // With it on, the layers past max_window_layers slide.
    const auto on = read_hf_config(R"({"model_type": "qwen2", "hidden_size": 3584,
      "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
      "sliding_window": 4096, "use_sliding_window": true, "max_window_layers": 21})");
    REQUIRE(on);
    CHECK(on->shape.sliding_layers == 7);
  }
}

TEST_CASE("data/model-configs.json: every row says where its defaults were read") {
  std::ifstream in(std::string(IMGSMITH_SOURCE_DIR) + "/data/model-configs.json");
  REQUIRE(in);
  const auto doc = nlohmann::json::parse(in);
  const auto& rows = doc.at("model_types");
  CHECK(rows.size() >= 20);
  const std::set<std::string> architectures = {"decoder", "encoder", "encoder-decoder",
                                               "multimodal"};
  const std::set<std::string> attentions = {"mha", "gqa", "mqa", "mla"};
  for (const auto& [type, row] : rows.items()) {
    INFO(type);
    CHECK(row.at("source").get<std::string>().starts_with("https://"));
    CHECK(architectures.count(row.at("architecture").get<std::string>()) == 1);
    CHECK(attentions.count(row.at("attention").get<std::string>()) == 1);
    CHECK(row.at("layers").at("default").is_number_unsigned());
    CHECK(row.at("attention_heads").at("default").is_number_unsigned());
    if (row.at("attention") == "mla") {
      CHECK(row.at("kv_lora_rank").at("default").is_number_unsigned());
      CHECK(row.at("qk_rope_head_dim").at("default").is_number_unsigned());
    }
  }
}

TEST_CASE("config.json with fields of the wrong type is no config, not an error") {
  // Each document read with its fields well typed, then with one wrong.
  const auto quantized = read_hf_config(
      R"({"num_hidden_layers": 2, "quantization_config": {"quant_method": "gptq"}})");
  REQUIRE(quantized);
  CHECK(quantized->shape.layers == 2);
  CHECK(quantized->quant_method == "gptq");
  CHECK_FALSE(
      read_hf_config(R"({"num_hidden_layers": 2, "quantization_config": {"quant_method": null}})"));

  const auto multi_query = read_hf_config(R"({"num_hidden_layers": 2, "multi_query": true})");
  REQUIRE(multi_query);
  CHECK(multi_query->shape.kv_heads == 1);
  CHECK_FALSE(read_hf_config(R"({"num_hidden_layers": 2, "multi_query": "yes"})"));

  const auto typed =
      read_hf_config(R"({"architectures": ["LlamaForCausalLM"], "torch_dtype": "bfloat16"})");
  REQUIRE(typed);
  CHECK(typed->shape.architecture == "LlamaForCausalLM");
  CHECK(typed->torch_dtype == "bfloat16");
  CHECK_FALSE(read_hf_config(R"({"architectures": [1], "torch_dtype": 5})"));
  // Sizes written as a string or a list are no shape.
  CHECK_FALSE(read_hf_config(R"({"num_hidden_layers": "32", "hidden_size": [4096]})"));
}

TEST_CASE("sizes too large to hold saturate: no GPU holds them, no gate passes them") {
  Model m;
  m.format = ModelFormat::Safetensors;
  m.parameters = UINT64_MAX / 2;
  m.weight_bytes = UINT64_MAX / 2;
  m.shape.layers = 1ull << 40;
  m.shape.kv_heads = 1ull << 20;
  m.shape.key_dim = m.shape.value_dim = 128;
  m.shape.context_length = 1ull << 30;
  m.shape_from = "config.json";
  const VramEstimate v = estimate_vram(m, {});
  for (const auto& n : v.needs) {
    CHECK(n.total == UINT64_MAX);
    CHECK(n.fits_on.empty());
    CHECK(v.per_gpu(n, 8) == UINT64_MAX);
  }
}

TEST_CASE("a model file's inspection is its typed record and other content has none") {
  const auto [header, size] = safetensors_header({{"a", {3, 5}}});
  StringReader rest({});
  const std::optional<ModelFile> f = inspect_model_content(header, rest, size);
  REQUIRE(f);
  CHECK(f->format == ModelFormat::Safetensors);
  CHECK(f->parameters == 15);
  CHECK(f->tensors == 1);
  StringReader nothing({});
  CHECK_FALSE(inspect_model_content("plain text, no model here", nothing, 25));
}

TEST_CASE("config.json: grouped-query attention, head_dim, quantization, text_config") {
  const auto c = read_hf_config(R"({"num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 8, "hidden_size": 4096, "max_position_embeddings": 131072,
    "quantization_config": {"quant_method": "gptq", "bits": 4}})");
  REQUIRE(c);
  CHECK(c->shape.kv_heads == 8);
  CHECK(c->shape.key_dim == 128);
  CHECK(c->quant_method == "gptq");
  CHECK(c->quant_bits == 4);
  const auto nested =
      read_hf_config(R"({"text_config": {"num_hidden_layers": 2, "num_attention_heads": 4,
    "hidden_size": 64, "head_dim": 32}})");
  REQUIRE(nested);
  CHECK(nested->shape.layers == 2);
  CHECK(nested->shape.kv_heads == 4);  // absent: as many as the attention heads
  CHECK(nested->shape.key_dim == 32);
  CHECK_FALSE(read_hf_config(R"({"name": "some-app", "port": 8080})"));
  CHECK_FALSE(read_hf_config("not json"));
}

// The models of one safetensors file of `data_bytes` behind `header`, with
// a GPTQ 4-bit config.json beside it.
static std::vector<Model> gptq_4bit_models(const json& header, std::uint64_t data_bytes) {
  const std::string text = header.dump();
  const ModelFile f = read_text(le(text.size(), 8) + text, 8 + text.size() + data_bytes);
  REQUIRE(f.warnings.empty());
  return collect_models(
      {{"/q/model.safetensors", f}},
      {{"/q/config.json",
        R"({"num_hidden_layers": 1, "quantization_config": {"quant_method": "gptq", "bits": 4}})"}});
}

TEST_CASE("GPTQ: packed int32 weights count as 8 parameters each, scales and zeros not at all") {
  json header = {
      {"l.qweight", {{"dtype", "I32"}, {"shape", {64, 512}}, {"data_offsets", {0, 131072}}}},
      {"l.qzeros", {{"dtype", "I32"}, {"shape", {4, 64}}, {"data_offsets", {131072, 132096}}}},
      {"l.scales", {{"dtype", "F16"}, {"shape", {4, 512}}, {"data_offsets", {132096, 136192}}}},
      {"norm.weight", {{"dtype", "F16"}, {"shape", {512}}, {"data_offsets", {136192, 137216}}}}};
  const std::vector<Model> models = gptq_4bit_models(header, 137216);
  REQUIRE(models.size() == 1);
  CHECK(models[0].parameters == 64ull * 512 * 8 + 512);
  CHECK(models[0].quantization == "gptq 4-bit");
}

// A bitsandbytes NF4 checkpoint with double quantization, as transformers
// saves one (the tensor names and dtypes of a quantized Llama-3-8B layer):
// the packed weight is uint8 [n/2, 1], its state absmax (uint8, blocks of
// 64), nested_absmax and nested_quant_map (float32, blocks of 256),
// quant_map (16 float32) and quant_state (its JSON as uint8).
TEST_CASE("bitsandbytes 4-bit: two weights a byte, the quantization state no parameters") {
  const std::uint64_t n = 4096ull * 4096;  // q_proj
  struct Row {
    const char* name;
    const char* dtype;
    std::vector<std::uint64_t> shape;
    unsigned bytes;
  };
  const std::vector<Row> rows = {
      {"model.embed_tokens.weight", "BF16", {128256, 4096}, 2},
      {"model.layers.0.input_layernorm.weight", "BF16", {4096}, 2},
      {"model.layers.0.self_attn.q_proj.weight", "U8", {n / 2, 1}, 1},
      {"model.layers.0.self_attn.q_proj.weight.absmax", "U8", {n / 64}, 1},
      {"model.layers.0.self_attn.q_proj.weight.nested_absmax", "F32", {n / 64 / 256}, 4},
      {"model.layers.0.self_attn.q_proj.weight.nested_quant_map", "F32", {256}, 4},
      {"model.layers.0.self_attn.q_proj.weight.quant_map", "F32", {16}, 4},
      {"model.layers.0.self_attn.q_proj.weight.quant_state.bitsandbytes__nf4", "U8", {211}, 1}};
  json header = json::object();
  std::uint64_t offset = 0;
  for (const auto& r : rows) {
    std::uint64_t elements = 1;
    for (auto d : r.shape) elements *= d;
    header[r.name] = {{"dtype", r.dtype},
                      {"shape", r.shape},
                      {"data_offsets", {offset, offset + elements * r.bytes}}};
    offset += elements * r.bytes;
  }
  const std::string text = header.dump();
  const ModelFile f = read_text(le(text.size(), 8) + text, 8 + text.size() + offset);
  REQUIRE(f.warnings.empty());
  const auto models_with = [&](const char* config) {
    return collect_models({{"/b/model.safetensors", f}}, {{"/b/config.json", config}});
  };
  const auto nf4 = models_with(
      R"({"model_type": "llama", "num_hidden_layers": 32, "quantization_config": {"quant_method": "bitsandbytes",
      "load_in_4bit": true, "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": true}})");
  REQUIRE(nf4.size() == 1);
  // The unquantized tensors, and q_proj's 4096 x 4096 weights.
  CHECK(nf4[0].parameters == 128256ull * 4096 + 4096 + n);
  CHECK(nf4[0].quantization == "bitsandbytes 4-bit");
  // Without a config saying the bits: read as 4-bit, and said.
  const auto unsaid = collect_models({{"/b/model.safetensors", f}}, {});
  REQUIRE(unsaid.size() == 1);
  CHECK(unsaid[0].parameters == 128256ull * 4096 + 4096 + n);
  REQUIRE(unsaid[0].warnings.size() == 1);
  CHECK(unsaid[0].warnings[0].find("read as 4-bit") != std::string::npos);
  // The embeddings and the norm stay at 16 bits in the int8 row.
  CHECK(nf4[0].kept_16bit == 128256ull * 4096 + 4096);
  CHECK(nf4[0].quantized_bits == 4);
}

// LLM.int8 (load_in_8bit) saves int8 weights and a float32 SCB a row.
TEST_CASE("bitsandbytes 8-bit: int8 weights one each, SCB no parameters, with or without config") {
  json header = {
      {"l.weight", {{"dtype", "I8"}, {"shape", {512, 256}}, {"data_offsets", {0, 131072}}}},
      {"l.SCB", {{"dtype", "F32"}, {"shape", {512}}, {"data_offsets", {131072, 133120}}}},
      {"l.weight_format", {{"dtype", "U8"}, {"shape", {1}}, {"data_offsets", {133120, 133121}}}}};
  const std::string text = header.dump();
  const ModelFile f = read_text(le(text.size(), 8) + text, 8 + text.size() + 133121);
  REQUIRE(f.warnings.empty());
  for (const char* config :
       {R"({"num_hidden_layers": 1, "quantization_config": {"quant_method": "bitsandbytes",
         "load_in_8bit": true}})",
        ""}) {
    const auto models = collect_models(
        {{"/b/model.safetensors", f}},
        *config ? std::vector<TextFileAt>{{"/b/config.json", config}} : std::vector<TextFileAt>{});
    REQUIRE(models.size() == 1);
    CHECK(models[0].parameters == 512ull * 256);
    CHECK(models[0].quantization == "bitsandbytes 8-bit");
    CHECK(models[0].quantized_bits == 8);
  }
}

// A GPTQ checkpoint is 4-bit already: its int4 and int8 rows are the file
// as stored, and a gate that it fails never advises int4.
// Published 4-bit GPTQ files (group 128) beside the int4 row: the
// parameters are the models' published counts, the 16-bit part their
// embeddings and LM head (vocabulary x hidden, each) and 2 norms a layer
// and a final one.
TEST_CASE("the int4 row matches published GPTQ files of Llama-2-13B and 70B within 1%") {
  struct Published {
    std::uint64_t parameters, vocab, hidden, layers;
    double file_bytes;  // the hub's file listing
  };
  // TheBloke/Llama-2-13B-GPTQ main (4-bit, 128g): 7.26 GB;
  // TheBloke/Llama-2-70B-chat-GPTQ gptq-4bit-128g-actorder_True: 36.65 GB.
  for (const Published& p : {Published{13'015'864'320, 32'000, 5120, 40, 7.26e9},
                             Published{68'976'648'192, 32'000, 8192, 80, 36.65e9}}) {
    Model m;
    m.format = ModelFormat::Safetensors;
    m.parameters = p.parameters;
    m.weight_bytes = 2 * p.parameters;
    m.kept_16bit = 2 * p.vocab * p.hidden + (2 * p.layers + 1) * p.hidden;
    const VramEstimate v = estimate_vram(m, {});
    const PrecisionNeed* int4 = v.at(Precision::Int4);
    REQUIRE(int4 != nullptr);
    CHECK(std::abs(static_cast<double>(int4->weights) / p.file_bytes - 1) < 0.01);
  }
}

TEST_CASE("an already 4-bit checkpoint: its int4 row is what it stores, never advice") {
  json header = {
      {"model.embed_tokens.weight",
       {{"dtype", "F16"}, {"shape", {32000, 512}}, {"data_offsets", {0, 32'768'000}}}},
      {"l.qweight",
       {{"dtype", "I32"}, {"shape", {64, 512}}, {"data_offsets", {32'768'000, 32'899'072}}}},
      {"l.qzeros",
       {{"dtype", "I32"}, {"shape", {4, 64}}, {"data_offsets", {32'899'072, 32'900'096}}}},
      {"l.scales",
       {{"dtype", "F16"}, {"shape", {4, 512}}, {"data_offsets", {32'900'096, 32'904'192}}}},
      {"norm.weight",
       {{"dtype", "F16"}, {"shape", {512}}, {"data_offsets", {32'904'192, 32'905'216}}}}};
  const std::vector<Model> models = gptq_4bit_models(header, 32'905'216);
  REQUIRE(models.size() == 1);
  CHECK(models[0].quantized_bits == 4);
  CHECK(models[0].kept_16bit == 32000ull * 512 + 512);
  const VramEstimate v = estimate_vram(models[0], {});
  const PrecisionNeed* stored = v.at(Precision::Stored);
  const PrecisionNeed* bf16 = v.at(Precision::Bf16);
  const PrecisionNeed* int8 = v.at(Precision::Int8);
  const PrecisionNeed* int4 = v.at(Precision::Int4);
  REQUIRE((stored && bf16 && int8 && int4));
  CHECK(int4->as_stored);
  CHECK(int8->as_stored);
  CHECK_FALSE(bf16->as_stored);
  CHECK(int4->weights == stored->weights);
  CHECK(int4->weights == 32'905'216);
  // One byte short of the stored need: nothing smaller is on offer.
  GateConfig g;
  g.max_vram = stored->total - 1;
  const std::vector<ModelReport> reports{{models[0], v}};
  const GateResult r = evaluate_gate(Analysis{}, g, nullptr, nullptr, &reports);
  REQUIRE(r.checks.size() == 1);
  CHECK_FALSE(r.checks[0].passed);
  CHECK(r.checks[0].message.find("int4 would fit") == std::string::npos);
  CHECK(r.checks[0].message.find("no precision fits") != std::string::npos);
}

TEST_CASE("GPU names for --fits: a GPU, N of them, and a clear error for an unknown one") {
  const GpuTarget t = parse_gpu_target("a100-80gbx2");
  CHECK(t.gpu.name == "A100-80GB");
  CHECK(t.count == 2);
  CHECK(t.text() == "A100-80GBx2");
  CHECK(parse_gpu_target("L4").gpu.memory_bytes == 24'000'000'000);
  CHECK(parse_gpu_target("RTX-4090").count == 1);
  // As users type them: case, spaces, '-' and '_' do not matter.
  CHECK(parse_gpu_target("rtx4090").gpu.name == "RTX-4090");
  CHECK(parse_gpu_target("h100_nvl x2").count == 2);
  // An unknown name is named as such, not read as a count ("RTX3090" is
  // no GPU "RT" times 3090), with the nearest known one.
  CHECK_THROWS_WITH(parse_gpu_target("RTX3090"),
                    Catch::Contains("unknown GPU") && Catch::Contains("did you mean RTX-4090?"));
  CHECK_THROWS_WITH(parse_gpu_target("H1O0x2"), Catch::Contains("did you mean H100?"));  // letter O
  CHECK_THROWS_WITH(parse_gpu_target("H100x2000"), Catch::Contains("the GPU count is 1 to 1024"));
  CHECK_THROWS_WITH(parse_gpu_target("banana"), !Catch::Contains("did you mean"));
  try {
    parse_gpu_target("V100");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("unknown GPU") != std::string::npos);
    CHECK(std::string(e.what()).find("H100") != std::string::npos);
  }
  CHECK_THROWS_AS(parse_gpu_target("L4x0"), InputError);
  CHECK(parse_precision("fp16") == Precision::Bf16);
  CHECK_FALSE(parse_precision("int3"));
}

TEST_CASE("safetensors: the fast reading of plain headers agrees with the JSON parser's") {
  using imgsmith::models_detail::plain_header_agrees;
  const auto [llama, size] = safetensors_header(llama_7b());
  (void)size;
  // What writers produce, and what the fast path must hand to the parser.
  for (
      const std::string& header : {
          llama.substr(8),
          std::string(
              R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F16","shape":[2,3],"data_offsets":[0,12]}}  )"),
          std::string(
              R"({ "a" : { "dtype" : "BF16" , "shape" : [ ] , "data_offsets" : [ 0 , 2 ] } })"),
          std::string(
              R"({"a":{"dtype":"F16","shape":[18446744073709551615,2],"data_offsets":[0,1]}})"),
          std::string(
              R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4],"extra":7,"x":"y"}})"),
          std::string(
              R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},"a":{"dtype":"F32"}})"),
          std::string(R"({"a":{"dtype":"F16","dtype":"F32","shape":[2],"data_offsets":[0,4]}})"),
          std::string(R"({"a\u0041":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})"),
          std::string(R"({"a":{"dtype":"F16","shape":[2.0],"data_offsets":[0,4]}})"),
          std::string(R"({"a":{"dtype":"F16","shape":[-2],"data_offsets":[0,4]}})"),
          std::string(R"({"a":{"dtype":"F16","shape":[02],"data_offsets":[0,4]}})"),
          std::string(R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}} x)"),
          std::string(R"({"a":"F16"})"),
          std::string(R"({"a":{"dtype":{"x":1}}})"),
          std::string(R"({"__metadata__":{"k":["v"]}})"),
          std::string("{}"),
          std::string("[]"),
          std::string(R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]})"),
          std::string("{\"\xc3\xa9\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[0,2]}}"),
      }) {
    INFO(header.substr(0, 200));
    CHECK(plain_header_agrees(header));
  }
}

namespace {

// A header of `tensors`, each in its own dtype and element size.
struct TypedTensor {
  std::string name;
  std::vector<std::uint64_t> shape;
  std::string dtype;
  unsigned bytes;  // per element; a packed I32 is 4
};

std::vector<Model> published_model(const std::vector<TypedTensor>& tensors, const char* config) {
  json header = json::object();
  std::uint64_t offset = 0;
  for (const auto& t : tensors) {
    std::uint64_t n = 1;
    for (auto d : t.shape) n *= d;
    header[t.name] = {
        {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + n * t.bytes}}};
    offset += n * t.bytes;
  }
  const std::string text = header.dump();
  const ModelFile f = read_text(le(text.size(), 8) + text, 8 + text.size() + offset);
  REQUIRE(f.warnings.empty());
  return collect_models({{"/m/model.safetensors", f}}, {{"/m/config.json", config}});
}

// The decoder layers of a Llama-like model: each linear through `linear`
// (which may write it as several tensors), two norms a layer.
std::vector<TypedTensor> decoder(
    std::uint64_t layers, std::uint64_t hidden, std::uint64_t q, std::uint64_t kv,
    std::uint64_t mlp, bool qkv_bias,
    const std::function<void(std::vector<TypedTensor>&, const std::string&, std::uint64_t,
                             std::uint64_t)>& linear) {
  std::vector<TypedTensor> t;
  for (std::uint64_t i = 0; i < layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    linear(t, p + "self_attn.q_proj", q, hidden);
    linear(t, p + "self_attn.k_proj", kv, hidden);
    linear(t, p + "self_attn.v_proj", kv, hidden);
    if (qkv_bias)
      for (const auto& [proj, out] : {std::pair{"q_proj", q}, {"k_proj", kv}, {"v_proj", kv}})
        t.push_back({p + "self_attn." + proj + ".bias", {out}, "BF16", 2});
    linear(t, p + "self_attn.o_proj", hidden, q);
    linear(t, p + "mlp.gate_proj", mlp, hidden);
    linear(t, p + "mlp.up_proj", mlp, hidden);
    linear(t, p + "mlp.down_proj", hidden, mlp);
    t.push_back({p + "input_layernorm.weight", {hidden}, "BF16", 2});
    t.push_back({p + "post_attention_layernorm.weight", {hidden}, "BF16", 2});
  }
  t.push_back({"model.norm.weight", {hidden}, "BF16", 2});
  return t;
}

void bf16_linear(std::vector<TypedTensor>& t, const std::string& name, std::uint64_t out,
                 std::uint64_t in) {
  t.push_back({name + ".weight", {out, in}, "BF16", 2});
}

}  // namespace

// Published parameter counts and KV cache per token, from headers with the
// published checkpoints' tensor names, shapes and dtypes.
TEST_CASE("published figures: MoE and tied embeddings and FP8 and AWQ checkpoints") {
  SECTION("Mixtral-8x7B (MoE): 46,702,792,704 parameters, 128 KiB of KV cache a token") {
    // mistralai/Mixtral-8x7B-v0.1: 32 layers, hidden 4096, 32 heads, 8 KV
    // heads, 8 experts of 14336 (w1, w2, w3) and a router a layer,
    // vocabulary 32000, untied; the model card's 46.7B.
    std::vector<TypedTensor> t{{"model.embed_tokens.weight", {32000, 4096}, "BF16", 2},
                               {"lm_head.weight", {32000, 4096}, "BF16", 2},
                               {"model.norm.weight", {4096}, "BF16", 2}};
    for (int i = 0; i < 32; ++i) {
      const std::string p = "model.layers." + std::to_string(i) + ".";
      for (const auto& [proj, out] :
           {std::pair{"q_proj", 4096}, {"k_proj", 1024}, {"v_proj", 1024}, {"o_proj", 4096}})
        t.push_back({p + "self_attn." + proj + ".weight",
                     {static_cast<std::uint64_t>(out), 4096},
                     "BF16",
                     2});
      t.push_back({p + "block_sparse_moe.gate.weight", {8, 4096}, "BF16", 2});
      for (int e = 0; e < 8; ++e) {
        const std::string x = p + "block_sparse_moe.experts." + std::to_string(e) + ".";
        t.push_back({x + "w1.weight", {14336, 4096}, "BF16", 2});
        t.push_back({x + "w2.weight", {4096, 14336}, "BF16", 2});
        t.push_back({x + "w3.weight", {14336, 4096}, "BF16", 2});
      }
      t.push_back({p + "input_layernorm.weight", {4096}, "BF16", 2});
      t.push_back({p + "post_attention_layernorm.weight", {4096}, "BF16", 2});
    }
    const auto models = published_model(t, R"({"model_type": "mixtral", "hidden_size": 4096,
      "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": 8, "num_local_experts": 8, "num_experts_per_tok": 2,
      "max_position_embeddings": 32768, "vocab_size": 32000, "sliding_window": null})");
    REQUIRE(models.size() == 1);
    CHECK(models[0].parameters == 46'702'792'704);
    CHECK(models[0].shape.intermediate_size == 2 * 14336);  // two experts a token
    CHECK(estimate_vram(models[0], {}).kv_bytes_per_token == 131'072);
  }
  SECTION("Qwen2.5-1.5B (tied embeddings, QKV biases): 1,543,714,304 parameters") {
    // Qwen/Qwen2.5-1.5B: 28 layers, hidden 1536, 12 heads, 2 KV heads,
    // MLP 8960, vocabulary 151936, tie_word_embeddings (no lm_head
    // tensor); the model card's 1.54B (1.31B non-embedding).
    std::vector<TypedTensor> t = decoder(28, 1536, 1536, 256, 8960, true, bf16_linear);
    t.push_back({"model.embed_tokens.weight", {151936, 1536}, "BF16", 2});
    const auto models = published_model(t, R"({"model_type": "qwen2", "hidden_size": 1536,
      "intermediate_size": 8960, "num_hidden_layers": 28, "num_attention_heads": 12,
      "num_key_value_heads": 2, "max_position_embeddings": 131072, "vocab_size": 151936,
      "tie_word_embeddings": true, "use_sliding_window": false})");
    REQUIRE(models.size() == 1);
    CHECK(models[0].parameters == 1'543'714'304);
    CHECK(models[0].parameters - 151'936ull * 1536 == 1'310'340'608);
    // 28 x 2 x 2 x 128 x 2 B: vLLM's 5,517 blocks in 2.36 GiB (its log) are 28 KiB a token.
    CHECK(estimate_vram(models[0], {}).kv_bytes_per_token == 28'672);
  }
  SECTION("Llama-3.1-8B FP8 (compressed-tensors): the model's 8,030,261,248, not its scales") {
    // neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8: each linear an F8_E4M3
    // weight with a per-tensor F32 weight_scale and input_scale; the
    // embeddings, LM head and norms BF16.
    std::vector<TypedTensor> t = decoder(32, 4096, 4096, 1024, 14336, false,
                                         [](std::vector<TypedTensor>& out, const std::string& name,
                                            std::uint64_t o, std::uint64_t i) {
                                           out.push_back({name + ".weight", {o, i}, "F8_E4M3", 1});
                                           out.push_back({name + ".weight_scale", {1}, "F32", 4});
                                           out.push_back({name + ".input_scale", {1}, "F32", 4});
                                         });
    t.push_back({"model.embed_tokens.weight", {128256, 4096}, "BF16", 2});
    t.push_back({"lm_head.weight", {128256, 4096}, "BF16", 2});
    const auto models = published_model(t, R"({"model_type": "llama", "hidden_size": 4096,
      "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": 8, "max_position_embeddings": 131072, "vocab_size": 128256,
      "quantization_config": {"quant_method": "compressed-tensors"}})");
    REQUIRE(models.size() == 1);
    CHECK(models[0].parameters == 8'030'261'248);
    CHECK(models[0].quantized_bits == 8);
    const VramEstimate v = estimate_vram(models[0], {});
    CHECK(v.at(Precision::Int8)->as_stored);
    CHECK_FALSE(v.at(Precision::Int4)->as_stored);
    // 6.98 B FP8 weights at a byte, 1.05 B at two, 448 scales at four.
    CHECK(v.at(Precision::Stored)->weights ==
          6'979'321'856ull + 2 * (1'050'673'152ull + 262'144 + 4096) + 4 * 448);
  }
  SECTION("Llama-2-7B AWQ (4-bit, group 128): 6,738,415,616 parameters, 3.89 GB") {
    // AutoAWQ's layout: qweight [in, out / 8] and qzeros [in / 128, out /
    // 8] as int32, scales [in / 128, out] as float16.
    std::vector<TypedTensor> t =
        decoder(32, 4096, 4096, 4096, 11008, false,
                [](std::vector<TypedTensor>& out, const std::string& name, std::uint64_t o,
                   std::uint64_t i) {
                  out.push_back({name + ".qweight", {i, o / 8}, "I32", 4});
                  out.push_back({name + ".qzeros", {i / 128, o / 8}, "I32", 4});
                  out.push_back({name + ".scales", {i / 128, o}, "F16", 2});
                });
    t.push_back({"model.embed_tokens.weight", {32000, 4096}, "F16", 2});
    t.push_back({"lm_head.weight", {32000, 4096}, "F16", 2});
    const auto models = published_model(t, R"({"model_type": "llama", "hidden_size": 4096,
      "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
      "max_position_embeddings": 4096, "vocab_size": 32000,
      "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128}})");
    REQUIRE(models.size() == 1);
    CHECK(models[0].parameters == 6'738'415'616);
    CHECK(models[0].quantization == "awq 4-bit");
    // The file is what the int4 row of the 16-bit model estimates.
    CHECK(std::abs(static_cast<double>(models[0].weight_bytes) / 3.89e9 - 1) < 0.01);
    const VramEstimate v = estimate_vram(models[0], {});
    CHECK(v.at(Precision::Int4)->as_stored);
  }
}

TEST_CASE(
    "a weight map groups shards whatever their names, and config.json may sit one folder up") {
  auto tensors = llama_7b();
  const std::vector<Tensor> first(tensors.begin(), tensors.begin() + 150);
  const std::vector<Tensor> second(tensors.begin() + 150, tensors.end());
  const auto [h1, s1] = safetensors_header(first);
  const auto [h2, s2] = safetensors_header(second);
  json map = json::object();
  for (const auto& t : first) map[t.name] = "part-a.safetensors";
  for (const auto& t : second) map[t.name] = "part-b.safetensors";
  const std::string index =
      json{{"metadata", {{"total_size", 13'476'831'232ull}}}, {"weight_map", map}}.dump();
  SECTION("two shards of any names and their index: one model") {
    const std::vector<Model> models = collect_models(
        {{"/m/part-a.safetensors", read_text(h1, s1)},
         {"/m/part-b.safetensors", read_text(h2, s2)}},
        {{"/m/model.safetensors.index.json", index}, {"/m/config.json", kLlamaConfig}});
    REQUIRE(models.size() == 1);
    CHECK(models[0].parameters == 6'738'415'616);
    // The index's total_size is the weights' bytes.
    CHECK(models[0].weight_bytes == 13'476'831'232);
    CHECK(models[0].shape_from == "config.json");
  }
  SECTION("without the index they are two models") {
    CHECK(collect_models({{"/m/part-a.safetensors", read_text(h1, s1)},
                          {"/m/part-b.safetensors", read_text(h2, s2)}},
                         {})
              .size() == 2);
  }
  SECTION("weights in a subfolder take the checkpoint's config.json") {
    const std::vector<Model> models =
        collect_models({{"/ckpt/weights/model-00001-of-00002.safetensors", read_text(h1, s1)},
                        {"/ckpt/weights/model-00002-of-00002.safetensors", read_text(h2, s2)}},
                       {{"/ckpt/config.json", kLlamaConfig}});
    REQUIRE(models.size() == 1);
    CHECK(models[0].shape_from == "config.json");
    CHECK(models[0].shape.layers == 32);
  }
  SECTION("a weight map is captured for the scan, within its size") {
    CHECK(model_capture("m/model.safetensors.index.json", 30'000) == 30'000);
    CHECK(model_capture("m/model.safetensors.index.json", 64u << 20) == 0);
  }
}
