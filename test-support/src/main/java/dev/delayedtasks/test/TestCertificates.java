package dev.delayedtasks.test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * A certificate authority and a server certificate signed by it, made by the
 * {@code openssl} command for one test run: PEM files that {@code redis-server
 * --tls-*-file} reads and that clients trust through {@link #caCertificate()}. The server
 * certificate names {@code 127.0.0.1} and {@code localhost}, so clients can verify the
 * host too. Keys are EC P-256: fast to make and accepted by Redis and the JDK alike.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class TestCertificates {

	private static final String EC_KEY = "ec";

	private static final String P256 = "ec_paramgen_curve:prime256v1";

	private static final String DAYS = "2";

	private final Path caCertificate;

	private final Path serverCertificate;

	private final Path serverKey;

	private TestCertificates(Path directory) {
		this.caCertificate = directory.resolve("ca.crt");
		this.serverCertificate = directory.resolve("redis.crt");
		this.serverKey = directory.resolve("redis.key");
	}

	/**
	 * Make a CA and a server certificate in {@code directory}.
	 * @param directory where the PEM files go, created when missing
	 * @return the certificates
	 * @throws RedisUnavailableException if {@code openssl} is missing
	 * @throws RedisStartFailedException if {@code openssl} fails
	 */
	public static TestCertificates create(Path directory) {
		TestCertificates certificates = new TestCertificates(directory);
		try {
			Files.createDirectories(directory);
			Files.writeString(directory.resolve("server.ext"),
					"subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
							+ "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n");
		}
		catch (IOException ex) {
			throw new RedisStartFailedException("Could not prepare " + directory + ": " + ex.getMessage(), ex);
		}
		openssl(directory, "req", "-x509", "-new", "-nodes", "-newkey", EC_KEY, "-pkeyopt", P256, "-keyout", "ca.key",
				"-out", "ca.crt", "-days", DAYS, "-subj", "/CN=delayed-tasks test CA", "-addext",
				"basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
		openssl(directory, "req", "-new", "-nodes", "-newkey", EC_KEY, "-pkeyopt", P256, "-keyout", "redis.key", "-out",
				"redis.csr", "-subj", "/CN=localhost");
		openssl(directory, "x509", "-req", "-in", "redis.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
				"-out", "redis.crt", "-days", DAYS, "-extfile", "server.ext");
		return certificates;
	}

	private static void openssl(Path directory, String... arguments) {
		List<String> command = new ArrayList<>(List.of("openssl"));
		command.addAll(List.of(arguments));
		Process process;
		try {
			process = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true).start();
		}
		catch (IOException ex) {
			throw new RedisUnavailableException(
					"openssl is not on the PATH, and TLS tests need it to make their test CA: " + ex.getMessage(), ex);
		}
		try (InputStream output = process.getInputStream()) {
			String text = new String(output.readAllBytes(), StandardCharsets.UTF_8);
			if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
				process.destroyForcibly();
				throw new RedisStartFailedException("openssl " + arguments[0] + " failed: " + text.strip());
			}
		}
		catch (IOException ex) {
			throw new RedisStartFailedException("openssl " + arguments[0] + " failed: " + ex.getMessage(), ex);
		}
		catch (InterruptedException ex) {
			process.destroyForcibly();
			Thread.currentThread().interrupt();
			throw new RedisStartFailedException("Interrupted while running openssl", ex);
		}
	}

	/**
	 * The CA certificate (PEM) that signed the server certificate: what a client trusts,
	 * for example {@code spring.ssl.bundle.pem.<name>.truststore.certificate}.
	 * @return the file
	 */
	public Path caCertificate() {
		return this.caCertificate;
	}

	/**
	 * The server certificate (PEM), for {@code --tls-cert-file}.
	 * @return the file
	 */
	public Path serverCertificate() {
		return this.serverCertificate;
	}

	/**
	 * The server's private key (PEM, unencrypted), for {@code --tls-key-file}.
	 * @return the file
	 */
	public Path serverKey() {
		return this.serverKey;
	}

	/**
	 * Sockets that trust only the test CA.
	 * @return the socket factory
	 */
	SSLSocketFactory socketFactory() {
		try (InputStream in = Files.newInputStream(this.caCertificate)) {
			KeyStore trustStore = KeyStore.getInstance(KeyStore.getDefaultType());
			trustStore.load(null, null);
			trustStore.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
			TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
			trust.init(trustStore);
			SSLContext context = SSLContext.getInstance("TLS");
			context.init(null, trust.getTrustManagers(), null);
			return context.getSocketFactory();
		}
		catch (IOException | GeneralSecurityException ex) {
			throw new IllegalStateException("Cannot read the test CA " + this.caCertificate + ": " + ex.getMessage(),
					ex);
		}
	}

}
