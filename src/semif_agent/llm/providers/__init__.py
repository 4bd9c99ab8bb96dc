"""The built-in providers, one module each.

``anthropic`` and ``openai`` (with the OpenAI-compatible presets ``ollama``,
``vllm``, ``llamacpp`` and ``openrouter``) import their SDK only when a
provider is built; ``scripted`` plays back replies for tests. They are declared
as entry points of the ``semif_agent.providers`` group, as a plug-in declares its
own, and built by :mod:`semif_agent.llm.registry`.
"""
