// simple: generate text from a GGUF model with the CPU backend, in a few lines.
//
//   simple MODEL.gguf [PROMPT] [N_TOKENS]
//
// The backend is chosen here, at compile time: include another backend's header and construct
// it instead (eredu::vulkan::VulkanBackend::create(...)) and the rest is unchanged.
#include <cstdio>
#include <iostream>
#include <string>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/open_model.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.gguf [PROMPT] [N_TOKENS]\n", argv[0]);
    return 2;
  }
  const std::string prompt = argc > 2 ? argv[2] : "Once upon a time";
  eredu::GenerateOptions options;
  options.max_tokens = argc > 3 ? std::stoll(argv[3]) : 64;

  // Open the file once: weights on the backend, tokenizer, special tokens, chat template.
  auto model = eredu::open_model(eredu::cpu::CpuBackend({.threads = 2}), argv[1]);
  if (!model) {
    std::fprintf(stderr, "simple: %s\n", model.error().what().c_str());
    return 2;
  }

  std::cout << prompt << std::flush;
  auto result = model->generate(prompt, options, [](std::string_view text) {
    std::cout << text << std::flush;  // streamed as it is generated, always whole UTF-8
  });
  std::cout << std::endl;  // flushed before the stderr lines below
  if (!result) {
    std::fprintf(stderr, "simple: %s\n", result.error().what().c_str());
    return 2;
  }
  std::fprintf(stderr, "simple: %zu tokens at %.1f tokens/s\n", result->tokens.size(),
               result->timings.generation_tokens_per_second());
  return 0;
}
