/// <reference types="vitest" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The portal is served by `tessera server` at /ui/ (src/server/portal_files.cc);
// `npm run dev` proxies the API to a local `tessera up`.
export default defineConfig({
  base: "/ui/",
  plugins: [react()],
  build: {
    outDir: "dist",
    sourcemap: true,
    chunkSizeWarningLimit: 1200,
    rollupOptions: {
      output: {
        manualChunks: {
          react: ["react", "react-dom", "react-router-dom"],
          mantine: ["@mantine/core", "@mantine/hooks"],
        },
      },
    },
  },
  server: {
    proxy: {
      "/api": "http://127.0.0.1:7070",
      "/apis": "http://127.0.0.1:7070",
      "/ui/config.json": "http://127.0.0.1:7070",
    },
  },
  test: {
    environment: "node",
    include: ["src/**/*.test.ts"],
  },
});
