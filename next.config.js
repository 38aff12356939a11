/** @type {import('next').NextConfig} */
const nextConfig = {
  // Native and server-only packages stay external to the bundle (loaded from node_modules at run time).
  serverExternalPackages: [
    'better-sqlite3',
    '@prisma/adapter-better-sqlite3',
    '@prisma/adapter-pg',
    'pg',
    'onnxruntime-node',
  ],
  poweredByHeader: false,
  reactStrictMode: true,
};

export default nextConfig;
