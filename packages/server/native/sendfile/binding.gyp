{
  "targets": [
    {
      "target_name": "lamina_sendfile",
      "sources": ["lamina_sendfile.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
