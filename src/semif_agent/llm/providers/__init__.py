"""The built-in providers, one module each.

``anthropic`` and ``openai`` (with the OpenAI-compatible presets ``ollama``,
``vllm``, ``llamacpp`` and ``openrouter``) import their SDK only when a
provider is built; ``scripted`` plays back replies for tests. They register in
:mod:`semif_agent.llm.registry` like third-party providers do.
"""
